/**
 * "Which source address did the pod see?" (syllabus T2, T3). Every node's NodePort is probed
 * from outside on agnhost's `/clientip`, which answers with the caller's `ip:port` as the pod
 * saw it. With `externalTrafficPolicy: Local` the answer is the outside client's own address;
 * with `Cluster`, a node that forwards to a pod elsewhere masquerades, so the pod sees that
 * node's address (or the node's gateway on the pod network). Which nodes answer at all is
 * judged by evaluateProbes, so one round of probes serves both questions.
 */
import { MODE_INFO } from '../../catalogue/modes.ts';
import { inCidr } from '../../dataplane/addr.ts';
import { fact, fail, pass } from './facts.ts';
import { z } from 'zod';
import { evaluateProbes, gatherProbes, probeObservationSchema, type ProbeExpectation } from './probe.ts';
import type { Check, EvalContext, Fact, Verdict } from './types.ts';

export interface ClientIpExpectation {
  /** The Service whose NodePort is probed (first port). */
  service: string;
  answer: ProbeExpectation['answer'];
  /**
   * `client`: every answer shows an address that is neither a node's nor on the pod network.
   * `snat`: at least one answer shows a node's address or a pod-network gateway.
   */
  source: 'client' | 'snat';
}

export const clientIpObservationSchema = z.object({
  probes: probeObservationSchema,
  /** Node name → its address on the kind network. */
  nodeIps: z.record(z.string(), z.string()),
});
export type ClientIpObservation = z.infer<typeof clientIpObservationSchema>;

/** agnhost `/clientip` answers `10.244.1.1:51234`; IPv6 would be `[::1]:51234`. */
function clientAddress(body: string | undefined): string | null {
  const m = /^\[?([0-9a-fA-F:.]+?)\]?:\d+\s*$/.exec((body ?? '').trim());
  return m ? m[1] : null;
}

async function gatherClientIp(ctx: Parameters<Check['gather']>[0], want: ClientIpExpectation): Promise<ClientIpObservation> {
  const probes = await gatherProbes(ctx, { target: { nodePortOf: want.service }, path: '/clientip', answer: want.answer });
  const ips = await Promise.all(probes.nodes.map((n) => ctx.cluster.nodeIp(n, { signal: ctx.signal })));
  return { probes, nodeIps: Object.fromEntries(probes.nodes.map((n, i) => [n, ips[i]])) };
}

/** Whose address is this: a node's, the pod network's (a node's gateway there), or someone outside. */
function whose(ip: string, obs: ClientIpObservation, ctx: EvalContext): string {
  const node = Object.entries(obs.nodeIps).find(([, v]) => v === ip)?.[0];
  if (node) return `node ${node}`;
  if (inCidr(ip, MODE_INFO[ctx.mode].podSubnet)) return "the pod network (a node's gateway)";
  return 'outside the cluster (the client)';
}

function evaluateClientIp(want: ClientIpExpectation, obs: ClientIpObservation, ctx: EvalContext): Verdict {
  const reach = evaluateProbes({ target: { nodePortOf: want.service }, path: '/clientip', answer: want.answer }, obs.probes, ctx);
  if (reach.status === 'fail') return reach;
  const seen: Fact[] = [];
  let rewritten = 0;
  const clientIps: string[] = [];
  obs.probes.nodes.forEach((node, i) => {
    const p = obs.probes.probes[i];
    if (!p?.answered) return;
    const ip = clientAddress(p.body);
    const who = ip ? whose(ip, obs, ctx) : 'unreadable';
    const isClient = who.startsWith('outside');
    if (!isClient && ip) rewritten++;
    if (isClient && ip) clientIps.push(ip);
    const label = `source address the pod saw via ${node}`;
    seen.push(
      want.source === 'client'
        ? fact(label, "the client's own (not a node, not the pod network)", `${ip ?? p.body ?? '?'} (${who})`, isClient)
        : fact(label, 'any', `${ip ?? p.body ?? '?'} (${who})`, true),
    );
  });
  if (want.source === 'snat') {
    seen.push(fact('answers whose source was rewritten (SNAT)', 'at least 1', rewritten, rewritten > 0));
  }
  const facts = [...reach.facts, ...seen];
  const wrong = seen.find((f) => !f.ok);
  if (want.source === 'client') {
    if (wrong) return fail(`The right nodes answered, but a pod saw ${wrong.seen} as the source: the client address was not kept.`, facts);
    return pass(`${reach.message} The pods saw the client's real address, ${[...new Set(clientIps)].join(', ')}.`, facts);
  }
  if (wrong) return fail("Every node answered, but no pod saw a node's address: nothing was masqueraded on the way.", facts);
  return pass(
    `${reach.message} ${rewritten} of ${seen.length - 1} answers carried a node's address instead of the client's: the node masqueraded (SNAT) before forwarding.`,
    facts,
  );
}

export function probeClientIp(want: ClientIpExpectation): Check<ClientIpObservation> {
  return {
    observations: clientIpObservationSchema,
    gather: (ctx) => gatherClientIp(ctx, want),
    evaluate: (obs, ctx) => evaluateClientIp(want, obs, ctx),
  };
}
