import type { Command } from './command.ts';
import { parseFlags, usageError } from './command.ts';
import { commandInfo } from './catalogue.ts';
import { chooseMode } from '../labs/mode-choice.ts';
import { clearPasses } from '../labs/progress.ts';
import { loadLabs, requireLab } from '../labs/registry.ts';
import { resetLab } from '../labs/reset.ts';
import { goto } from './goto.ts';

export const reset: Command = {
  ...commandInfo('reset'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(this, argv, { mode: { type: 'string' }, step: { type: 'string' } });
    const [labId, ...extra] = positionals;
    if (!labId || extra.length) throw usageError(this, 'name one lab');
    if (values.step) return goto.run([labId, values.step, '--reset', ...(values.mode ? ['--mode', values.mode] : [])], ctx);
    const lab = requireLab(labId);
    const mode = chooseMode(lab, values.mode);
    ctx.stdout.write(`Resetting ${lab.id} on the ${mode} cluster (namespace ${lab.namespace})…\n`);
    const r = await resetLab(lab, mode, { signal: ctx.signal });
    await clearPasses(loadLabs(), lab, mode);
    for (const note of r.restored) ctx.stdout.write(`Restored: ${note}.\n`);
    ctx.stdout.write(`Done in ${(r.durationMs / 1000).toFixed(1)} s.\n`);
    return 0;
  },
};
