import { parseModeArg } from '../clusters/mode-arg.ts';
import { kubeconfigPath } from '../catalogue/modes.ts';
import { parseFlags, usageError, type Command } from './command.ts';
import { commandInfo } from './catalogue.ts';

export const kubeconfig: Command = {
  ...commandInfo('kubeconfig'),
  async run(argv, ctx) {
    const { positionals } = parseFlags(kubeconfig, argv, {});
    if (positionals.length > 1) throw usageError(kubeconfig, 'one mode at a time.');
    ctx.stdout.write(`${kubeconfigPath(parseModeArg(kubeconfig, positionals[0]))}\n`);
    return 0;
  },
};
