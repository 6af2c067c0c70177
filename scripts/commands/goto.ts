import type { Command, CommandContext } from './command.ts';
import { parseFlags, usageError } from './command.ts';
import { commandInfo } from './catalogue.ts';
import { CHECK_EXIT } from './check.ts';
import { progressPrinter } from '../clusters/cli-progress.ts';
import { gotoStep } from '../labs/goto.ts';
import { chooseMode } from '../labs/mode-choice.ts';
import { requireLab, requireStep } from '../labs/registry.ts';

/** Exit codes as `dplab check`: 1 when an earlier step's check did not pass, 3 when the cluster could not be reached. */
export const GOTO_EXIT = { ready: CHECK_EXIT.pass, failed: CHECK_EXIT.fail, error: CHECK_EXIT.error } as const;

export const goto: Command = {
  ...commandInfo('goto'),
  async run(argv, ctx: CommandContext) {
    const { values, positionals } = parseFlags(this, argv, { mode: { type: 'string' }, reset: { type: 'boolean' } });
    const [labId, stepId, ...extra] = positionals;
    if (!labId || !stepId || extra.length) throw usageError(this, 'name a lab and one of its steps (see `dplab labs`)');
    const lab = requireLab(labId);
    const step = requireStep(lab, stepId);
    const mode = chooseMode(lab, values.mode);
    const printer = progressPrinter(ctx.stderr);
    let result;
    try {
      result = await gotoStep(lab, step, mode, { reset: values.reset === true, signal: ctx.signal, onEvent: printer.onEvent });
    } finally {
      printer.dispose();
    }
    ctx.stdout.write(`${result.message}\n`);
    if (result.fix) ctx.stdout.write(`  ${result.fix}\n`);
    if (result.details && ctx.verbose) ctx.stdout.write(`${result.details}\n`);
    ctx.stdout.write(`Done in ${(result.durationMs / 1000).toFixed(1)} s.\n`);
    return GOTO_EXIT[result.status];
  },
};
