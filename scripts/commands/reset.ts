import type { Command } from './command.ts';
import { parseFlags, usageError } from './command.ts';
import { chooseMode } from '../labs/mode-choice.ts';
import { clearPasses } from '../labs/progress.ts';
import { loadLabs, requireLab, requireStep } from '../labs/registry.ts';
import { resetLab } from '../labs/reset.ts';

export const reset: Command = {
  name: 'reset',
  summary: 'Reset a lab: recreate its namespace and setup (optionally solved up to a step)',
  usage: 'dplab reset <lab> [--step <step>] [--mode <mode>]',
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(this, argv, { mode: { type: 'string' }, step: { type: 'string' } });
    const [labId, ...extra] = positionals;
    if (!labId || extra.length) throw usageError(this, 'name one lab');
    const lab = requireLab(labId);
    const toStep = values.step ? requireStep(lab, values.step) : undefined;
    const mode = chooseMode(lab, values.mode);
    ctx.stdout.write(`Resetting ${lab.id} on the ${mode} cluster (namespace ${lab.namespace})…\n`);
    const r = await resetLab(lab, mode, { toStep });
    await clearPasses(loadLabs(), lab, mode, toStep?.id);
    for (const note of r.restored) ctx.stdout.write(`Restored: ${note}.\n`);
    ctx.stdout.write(`Done in ${(r.durationMs / 1000).toFixed(1)} s.${r.solved.length ? ` Solved: ${r.solved.join(', ')}.` : ''}\n`);
    return 0;
  },
};
