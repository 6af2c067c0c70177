import type { Command, CommandContext } from './command.ts';
import { parseFlags, usageError } from './command.ts';
import { commandInfo } from './catalogue.ts';
import { runCheck, type CheckResult } from '../labs/engine.ts';
import { formatCheckResult } from '../labs/format.ts';
import { chooseMode } from '../labs/mode-choice.ts';
import { recordPass } from '../labs/progress.ts';
import { loadLabs, requireLab, requireStep } from '../labs/registry.ts';

/** Exit codes: a learner's unfinished step is not a broken cluster. */
export const CHECK_EXIT = { pass: 0, fail: 1, error: 3 } as const;

export const check: Command = {
  ...commandInfo('check'),
  async run(argv, ctx: CommandContext) {
    const out = ctx.stdout;
    const { values, positionals } = parseFlags(this, argv, { mode: { type: 'string' }, json: { type: 'boolean' } });
    const [labId, stepId, ...extra] = positionals;
    if (!labId || extra.length) throw usageError(this, labId ? 'too many arguments' : 'name a lab (see `dplab labs`)');
    const lab = requireLab(labId);
    const mode = chooseMode(lab, values.mode);
    const steps = stepId ? [requireStep(lab, stepId)] : lab.steps;
    if (!values.json) out.write(`${lab.id} on the ${mode} cluster\n`);
    const results: CheckResult[] = [];
    for (const step of steps) {
      const r = await runCheck(lab, step, mode, { signal: ctx.signal });
      results.push(r);
      if (r.status === 'pass') await recordPass(loadLabs(), lab.id, step.id, mode);
      if (!values.json) out.write(`${formatCheckResult(r, { verbose: ctx.verbose })}\n`);
      // Steps build on each other: after the first one not done, later checks would only repeat it.
      if (r.status !== 'pass') break;
    }
    const skipped = steps.length - results.length;
    if (values.json)
      out.write(
        `${JSON.stringify(
          results.map(({ observations: _o, ...r }) => r),
          null,
          2,
        )}\n`,
      );
    else if (skipped) out.write(`  (${skipped} later step${skipped === 1 ? '' : 's'} not checked)\n`);
    const worst = results.find((r) => r.status === 'error') ?? results.find((r) => r.status === 'fail');
    return CHECK_EXIT[worst?.status ?? 'pass'];
  },
};
