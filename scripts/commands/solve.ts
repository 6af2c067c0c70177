import type { Command } from './command.ts';
import { parseFlags, usageError } from './command.ts';
import { commandInfo } from './catalogue.ts';
import { chooseMode } from '../labs/mode-choice.ts';
import { requireLab, requireStep } from '../labs/registry.ts';
import { applySolution } from '../labs/solve.ts';

export const solve: Command = {
  ...commandInfo('solve'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(this, argv, { mode: { type: 'string' } });
    const [labId, stepId, ...extra] = positionals;
    if (!labId || !stepId || extra.length) throw usageError(this, 'name a lab and one of its steps');
    const lab = requireLab(labId);
    const step = requireStep(lab, stepId);
    const mode = chooseMode(lab, values.mode);
    ctx.stdout.write(`Applying the solution of ${lab.id} / ${step.id} on the ${mode} cluster:\n`);
    const r = await applySolution(lab, step, mode);
    ctx.stdout.write(
      `${r.commands.map((c) => `$ ${c}`).join('\n')}\n${r.output}${r.output.endsWith('\n') || !r.output ? '' : '\n'}Done in ${(r.durationMs / 1000).toFixed(1)} s. Check it: dplab check ${lab.id} ${step.id} --mode ${mode}\n`,
    );
    return 0;
  },
};
