import type { ClusterStatus } from '../clusters/manager.ts';
import { sharedClusterManager } from '../services/runner-services.ts';
import { parseFlags, usageError, type Command } from './command.ts';
import { commandInfo } from './catalogue.ts';

function table(statuses: ClusterStatus[]): string {
  const rows = statuses.map((s) => [
    s.mode,
    s.state,
    s.state === 'absent' ? '-' : `${s.readyNodes}/${s.nodes}`,
    s.proxyMode,
    s.state === 'absent' ? '' : s.kubeconfig,
  ]);
  const head = ['MODE', 'STATE', 'NODES', 'DATAPLANE', 'KUBECONFIG'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  const out = [line(head), ...rows.map(line)];
  // One explanation per distinct problem (a stopped daemon affects every mode alike).
  const errors = [...new Map(statuses.filter((s) => s.error).map((s) => [s.error!.message, s])).values()];
  for (const s of errors)
    out.push(
      '',
      `${statuses
        .filter((x) => x.error?.message === s.error!.message)
        .map((x) => x.mode)
        .join(', ')}: ${s.error!.message}`,
      ...(s.error!.fix ? [`Fix: ${s.error!.fix}`] : []),
    );
  return out.join('\n');
}

export const status: Command = {
  ...commandInfo('status'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(status, argv, { json: { type: 'boolean' } });
    if (positionals.length) throw usageError(status, `unexpected argument "${positionals[0]}".`);
    const statuses = await sharedClusterManager().statusAll();
    ctx.stdout.write(`${values.json ? JSON.stringify(statuses, null, 2) : table(statuses)}\n`);
    return 0;
  },
};
