import { ensureSimBinaries } from '../sim/build.ts';
import { SIM_COMPONENTS } from '../sim/components.ts';
import { parseFlags, usageError, type Command } from './command.ts';
import { commandInfo } from './catalogue.ts';

export const simBuild: Command = {
  ...commandInfo('sim-build'),
  async run(argv, ctx) {
    const { values } = parseFlags(simBuild, argv, { only: { type: 'string' } }, false);
    const only = values.only
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = only?.filter((n) => !SIM_COMPONENTS.some((c) => c.name === n)) ?? [];
    if (unknown.length) throw usageError(simBuild, `unknown component ${unknown.join(', ')}`);
    const started = Date.now();
    const r = await ensureSimBinaries({ only, onProgress: (l) => ctx.stderr.write(`… ${l}\n`) });
    ctx.stdout.write(
      `${r.binDir}: built ${r.built.length ? r.built.join(', ') : 'nothing'}, reused ${r.reused.length ? r.reused.join(', ') : 'nothing'} (${Math.round((Date.now() - started) / 1000)} s).\n`,
    );
    return 0;
  },
};
