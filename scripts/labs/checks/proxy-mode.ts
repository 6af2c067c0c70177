/**
 * "A node's proxy mode is M" (syllabus S3, E2). kube-proxy answers `/proxyMode` on
 * 127.0.0.1:10249 inside each node; on the Cilium cluster there is no kube-proxy, and the
 * agent's `cilium-dbg status` says `KubeProxyReplacement: True` instead. Its `--verbose` form
 * also says whether socket-level load balancing is on, which the verdict reports beside it: kind
 * gives it only on a cgroup v2 host, so the course's recordings say which they ran with.
 */
import { CommandError } from '../../base/exec.ts';
import { agentExec, modeRecord, unreachable } from '../../catalogue/modes.ts';
import { z } from 'zod';
import { commandObservationSchema, observeCommand } from './command.ts';
import { fact, fail, pass } from './facts.ts';
import { firstItem, getByName, kubeListSchema } from './kube.ts';
import type { EvalContext, GatherContext, Verdict } from './types.ts';

export const proxyModeObservationSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('kube-proxy'), node: z.string(), proxyMode: z.string().nullable(), error: z.string().optional() }),
  // An agent's observation is named `cilium` in the recordings (Cilium is the one agent).
  z.object({ kind: z.literal('cilium'), status: commandObservationSchema, kubeProxy: kubeListSchema }),
]);
export type ProxyModeObservation = z.infer<typeof proxyModeObservationSchema>;

export async function gatherProxyMode(ctx: GatherContext): Promise<ProxyModeObservation> {
  const d = modeRecord(ctx.mode).dataplane;
  switch (d.kind) {
    case 'kube-proxy': {
      const [node] = await ctx.cluster.nodes({ signal: ctx.signal });
      try {
        return { kind: 'kube-proxy', node, proxyMode: await ctx.cluster.proxyMode(node, { signal: ctx.signal }) };
      } catch (err) {
        if (err instanceof CommandError && err.kind === 'failed')
          return { kind: 'kube-proxy', node, proxyMode: null, error: err.stderr.trim() || `exit code ${err.exitCode}` };
        throw err;
      }
    }
    case 'agent': {
      const [status, kubeProxy] = await Promise.all([
        observeCommand(() => ctx.cluster.kubectl(agentExec(d.agent, [...d.agent.status, '--verbose']), { signal: ctx.signal })),
        getByName(ctx, 'daemonsets', 'kube-proxy', 'kube-system'),
      ]);
      return { kind: 'cilium', status, kubeProxy };
    }
    default:
      return unreachable(d);
  }
}

/** `True` from a `KubeProxyReplacement:   True   [eth0 …]` line, or null. */
export function kubeProxyReplacement(statusText: string): string | null {
  return /^KubeProxyReplacement:\s+(\S+)/m.exec(statusText)?.[1] ?? null;
}

/** `Enabled (coverage Full)` from the `KubeProxyReplacement Details` block of `cilium-dbg status --verbose`, or null. */
export function socketLB(statusText: string): string | null {
  const on = /^\s+Socket LB:\s+(\S+)/m.exec(statusText)?.[1];
  if (!on) return null;
  const coverage = /^\s+Socket LB Coverage:\s+(.+?)\s*$/m.exec(statusText)?.[1];
  return coverage ? `${on} (coverage ${coverage})` : on;
}

/** What the node says about who implements Services: kube-proxy's mode, or Cilium's replacement flag. */
export function seenProxyMode(obs: ProxyModeObservation): string | null {
  return obs.kind === 'kube-proxy' ? obs.proxyMode : kubeProxyReplacement(obs.status.stdout);
}

/** The answer a learner should find on this mode: kube-proxy's mode, or the agent's replacement flag. */
function expectedProxyMode(ctx: EvalContext): string {
  const d = modeRecord(ctx.mode).dataplane;
  switch (d.kind) {
    case 'kube-proxy':
      return d.proxyMode;
    case 'agent':
      return 'True';
    default:
      return unreachable(d);
  }
}

export function evaluateProxyMode(obs: ProxyModeObservation, ctx: EvalContext): Verdict {
  const want = expectedProxyMode(ctx);
  if (obs.kind === 'kube-proxy') {
    const f = fact(`kube-proxy /proxyMode on ${obs.node}`, want, obs.proxyMode ?? `no answer (${obs.error ?? 'unknown'})`);
    return f.ok
      ? pass(`kube-proxy on ${obs.node} runs in ${want} mode.`, [f])
      : fail(`kube-proxy on ${obs.node} reports ${f.seen}; this cluster should run ${want} mode.`, [f]);
  }
  const kpr = kubeProxyReplacement(obs.status.stdout);
  const hasKubeProxy = !!firstItem(obs.kubeProxy);
  const facts = [
    fact('cilium-dbg status: KubeProxyReplacement', 'True', kpr ?? `not shown (exit code ${obs.status.exitCode})`),
    fact('kube-proxy DaemonSet', 'absent', hasKubeProxy ? 'present' : 'absent'),
  ];
  if (!facts.every((f) => f.ok))
    return fail('This cluster should run Cilium with kube-proxy replacement and no kube-proxy DaemonSet.', facts);
  // Reported, not required: either way Cilium implements the Services, at connect() or per packet.
  const socket = socketLB(obs.status.stdout);
  facts.push(fact('cilium-dbg status --verbose: Socket LB', 'Enabled or Disabled', socket ?? 'not shown', socket !== null));
  return pass('No kube-proxy here: Cilium replaces it (KubeProxyReplacement: True).', facts);
}
