import { parseModeArg } from '../clusters/mode-arg.ts';
import { kubeconfigPath, MODES } from '../clusters/modes.ts';
import { parseFlags, usageError, type Command } from './command.ts';

export const kubeconfig: Command = {
  name: 'kubeconfig',
  summary: "Print the path of a mode's kubeconfig (for `export KUBECONFIG=…`)",
  usage: `dplab kubeconfig <${MODES.join('|')}>`,
  async run(argv, ctx) {
    const { positionals } = parseFlags(kubeconfig, argv, {});
    if (positionals.length > 1) throw usageError(kubeconfig, 'one mode at a time.');
    ctx.stdout.write(`${kubeconfigPath(parseModeArg(kubeconfig, positionals[0]))}\n`);
    return 0;
  },
};
