import { parseModeArg } from '../clusters/mode-arg.ts';
import { sweepLive, traceLive } from '../dataplane/trace/live-trace.ts';
import { traceText } from '../dataplane/trace/text.ts';
import { parseFlags, usageError, type Command } from './command.ts';
import { commandInfo } from './catalogue.ts';

export const trace: Command = {
  ...commandInfo('trace'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(trace, argv, {
      from: { type: 'string' },
      node: { type: 'string' },
      port: { type: 'string' },
      count: { type: 'string' },
      'node-port': { type: 'boolean' },
      sweep: { type: 'boolean' },
      json: { type: 'boolean' },
    });
    const mode = parseModeArg(trace, positionals[0]);
    // Ctrl-C ends the trace, which still removes its rules before the command returns. The
    // listener stays on (not `once`) until then: execa's exit hook re-raises a SIGINT that finds
    // no other listener, which killed the process before the removal ran (seen on real kind: the
    // Cilium monitor was left running). A second Ctrl-C leaves at once, as `dplab up` does.
    const controller = new AbortController();
    const onAbort = () => controller.abort(new Error('interrupted'));
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    let interrupts = 0;
    const onSigint = () => {
      if (++interrupts > 1) {
        ctx.stderr.write(`Leaving now: \`dplab trace ${mode} --sweep\` removes what the trace left.\n`);
        process.exit(130);
      }
      ctx.stderr.write('\nStopping the trace and removing its rules…\n');
      onAbort();
    };
    process.on('SIGINT', onSigint);
    try {
      if (values.sweep) {
        if (positionals.length > 1) throw usageError(trace, '--sweep takes only the mode (and --node).');
        const swept = await sweepLive(mode, { node: values.node, signal: controller.signal });
        for (const s of swept)
          ctx.stdout.write(`${s.node}: ${s.removed.length ? `removed ${s.removed.join('; ')}` : 'nothing to remove'}\n`);
        return 0;
      }
      if (positionals.length !== 2) throw usageError(trace, 'give <mode> <ns/name> of the Service.');
      const count = values.count === undefined ? undefined : Number(values.count);
      if (count !== undefined && !(Number.isInteger(count) && count >= 1 && count <= 20))
        throw usageError(trace, '--count must be 1 to 20.');
      const port = values.port === undefined ? undefined : Number(values.port);
      if (port !== undefined && !Number.isInteger(port)) throw usageError(trace, '--port must be a number.');
      const result = await traceLive(
        mode,
        { service: positionals[1], from: values.from, node: values.node, count, port, nodePort: values['node-port'] },
        { signal: controller.signal },
      );
      ctx.stdout.write(values.json ? `${JSON.stringify(result, null, 2)}\n` : traceText(result));
      return 0;
    } finally {
      process.off('SIGINT', onSigint);
      ctx.signal.removeEventListener('abort', onAbort);
    }
  },
};
