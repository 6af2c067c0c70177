/**
 * "A probe from outside node K answers / gets no answer" (syllabus T2, T3). Each node is
 * probed from a sibling on the kind network (ClusterHandle.probeFromOutside), because traffic
 * a node sends to itself short-circuits externalTrafficPolicy.
 */
import { z } from 'zod';
import type { ProbeResult } from '../../clusters/handle.ts';
import { fact, fail, pass } from './facts.ts';
import { firstItem, getByName, listBySelector, podReady, selectorString, type KubeList } from './kube.ts';
import type { EvalContext, GatherContext } from './types.ts';

export interface ProbeExpectation {
  /** A fixed port, or the NodePort of a Service's port (first port when `port` is not given). */
  target: { port: number } | { nodePortOf: string; port?: number };
  path: string;
  /** Which nodes must answer: all, none, or exactly those running a ready pod with these labels. */
  answer: 'all' | 'none' | { nodesWithPods: Record<string, string> };
}

const probeResultSchema: z.ZodType<ProbeResult> = z.object({
  from: z.string(),
  url: z.string(),
  answered: z.boolean(),
  status: z.number().optional(),
  body: z.string().optional(),
  error: z.string().optional(),
});

export const probeObservationSchema = z.object({
  port: z.number().nullable(),
  probes: z.array(probeResultSchema),
  nodes: z.array(z.string()),
  /** Node → ready pods matching the selector (only for `nodesWithPods`). */
  podsByNode: z.record(z.string(), z.array(z.string())).optional(),
});
export type ProbeObservation = z.infer<typeof probeObservationSchema>;

async function resolvePort(ctx: GatherContext, target: ProbeExpectation['target']): Promise<number | null> {
  if ('port' in target && !('nodePortOf' in target)) return target.port;
  const t = target as { nodePortOf: string; port?: number };
  const svc = firstItem(await getByName(ctx, 'services', t.nodePortOf));
  const ports: { port: number; nodePort?: number }[] = svc?.spec?.ports ?? [];
  const p = t.port === undefined ? ports[0] : ports.find((x) => x.port === t.port);
  return p?.nodePort ?? null;
}

export async function gatherProbes(ctx: GatherContext, want: ProbeExpectation): Promise<ProbeObservation> {
  const [port, nodes] = await Promise.all([resolvePort(ctx, want.target), ctx.cluster.nodes({ signal: ctx.signal })]);
  const probes =
    port === null ? [] : await Promise.all(nodes.map((n) => ctx.cluster.probeFromOutside(n, port, want.path, { signal: ctx.signal })));
  if (typeof want.answer !== 'object') return { port, probes, nodes };
  const pods: KubeList = await listBySelector(ctx, 'pods', selectorString(want.answer.nodesWithPods));
  const podsByNode: Record<string, string[]> = Object.fromEntries(nodes.map((n) => [n, []]));
  for (const pod of pods.items ?? []) {
    const node = pod.spec?.nodeName;
    if (node && podReady(pod)) (podsByNode[node] ??= []).push(pod.metadata?.name ?? '?');
  }
  return { port, probes, nodes, podsByNode };
}

export function evaluateProbes(want: ProbeExpectation, obs: ProbeObservation, ctx: EvalContext) {
  if (obs.port === null) {
    const name = 'nodePortOf' in want.target ? want.target.nodePortOf : '?';
    return fail(`Service \`${name}\` in \`${ctx.namespace}\` has no NodePort yet.`, [
      fact(`NodePort of ${name}`, 'a port in 30000-32767', 'none', false),
    ]);
  }
  // gatherProbes probes the nodes in order, so probes[i] belongs to nodes[i].
  const facts = obs.nodes.map((node, i) => {
    const should = want.answer === 'all' || (typeof want.answer === 'object' && (obs.podsByNode?.[node]?.length ?? 0) > 0);
    const probe: ProbeResult | undefined = obs.probes[i];
    const seen = probe?.answered
      ? `answered${probe.status ? ` (HTTP ${probe.status})` : ''}`
      : `no answer${probe?.error ? ` (${probe.error})` : ''}`;
    const pods = obs.podsByNode ? ` [pods: ${(obs.podsByNode[node] ?? []).join(', ') || 'none'}]` : '';
    return fact(`${node}:${obs.port}${want.path}${pods}`, should ? 'answers' : 'no answer', seen, !!probe?.answered === should);
  });
  const wrong = facts.filter((f) => !f.ok);
  if (wrong.length === 0) return pass(`Every node answered as expected on port ${obs.port}.`, facts);
  return fail(
    `${wrong.length} of ${facts.length} nodes did not behave as expected on port ${obs.port}: ${wrong.map((f) => f.label.split(':')[0]).join(', ')}.`,
    facts,
    true,
  );
}
