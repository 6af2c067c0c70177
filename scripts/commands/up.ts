import { sharedClusterManager } from '../services/runner-services.ts';
import { parseModeArg } from '../clusters/mode-arg.ts';
import { progressPrinter } from '../clusters/cli-progress.ts';
import { parseFlags, usageError, type Command } from './command.ts';
import { commandInfo } from './catalogue.ts';
import { nodeCountText } from '../wire/node-count.ts';

export const up: Command = {
  ...commandInfo('up'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(up, argv, { retain: { type: 'boolean' } });
    if (positionals.length > 1) throw usageError(up, 'one mode at a time.');
    const mode = parseModeArg(up, positionals[0]);

    const controller = new AbortController();
    const printer = progressPrinter(ctx.stderr);
    let interrupts = 0;
    // First Ctrl-C cancels and cleans up; a second one leaves at once.
    const onSigint = () => {
      interrupts++;
      if (interrupts > 1) process.exit(130);
      ctx.stderr.write('\nCancelling: stopping the running step and removing the half-made cluster (Ctrl-C again to leave now)…\n');
      controller.abort();
    };
    process.on('SIGINT', onSigint);
    try {
      const status = await sharedClusterManager().ensure(mode, {
        retain: values.retain,
        signal: controller.signal,
        onEvent: printer.onEvent,
      });
      printer.dispose();
      ctx.stdout.write(
        `The ${mode} cluster (${status.name}) is ready: ${nodeCountText(status)}.\nUse it with: export KUBECONFIG=${status.kubeconfig}\n`,
      );
      return 0;
    } finally {
      printer.dispose();
      process.off('SIGINT', onSigint);
    }
  },
};
