import { sharedClusterManager } from '../services/runner-services.ts';
import { parseModeArg } from '../clusters/mode-arg.ts';
import type { Mode } from '../catalogue/modes.ts';
import { parseFlags, usageError, type Command } from './command.ts';
import { commandInfo } from './catalogue.ts';

export const down: Command = {
  ...commandInfo('down'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(down, argv, { all: { type: 'boolean' } });
    if (values.all && positionals.length) throw usageError(down, 'give a mode or --all, not both.');
    let modes: Mode[];
    if (values.all) {
      // Only clusters that exist: deleting absent ones would just be noise.
      modes = (await sharedClusterManager().statusAll()).filter((s) => s.state !== 'absent').map((s) => s.mode);
      if (modes.length === 0) {
        ctx.stdout.write('No lab clusters are running.\n');
        return 0;
      }
    } else {
      if (positionals.length > 1) throw usageError(down, 'one mode at a time, or --all.');
      modes = [parseModeArg(down, positionals[0])];
    }
    for (const mode of modes) {
      await sharedClusterManager().delete(mode);
      ctx.stdout.write(`Deleted the ${mode} cluster.\n`);
    }
    return 0;
  },
};
