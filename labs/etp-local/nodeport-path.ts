/**
 * etp-local's rule-reading checks: web's NodePort followed through the rules of two nodes, the one
 * with the web pods and one without. With `externalTrafficPolicy: Local` kube-proxy sends outside
 * traffic from the external chain (`KUBE-EXT-<hash>` / `external-<hash>-…`) to the local chain
 * (`KUBE-SVL-<hash>` / `local-<hash>-…`) on the pods' node; on the other node the external chain
 * has no such jump, and the packet is dropped in the filter rules (`KUBE-EXTERNAL-SERVICES`'s "…
 * has no local endpoints" DROP / the `no-endpoint-nodeports` map). Cilium's agent on each node lists
 * the NodePort frontend with that node's backends only. With `Cluster` the external chain marks
 * every packet for masquerading and goes on to the Cluster chain, on every node.
 * (pkg/proxy/iptables/proxier.go and pkg/proxy/nftables/proxier.go of Kubernetes v1.35.0;
 * pkg/loadbalancer of Cilium 1.19.4.)
 */
import { z } from 'zod';
import { parse } from '../../scripts/dataplane/index.ts';
import type { Frontend } from '../../scripts/dataplane/model.ts';
import { evaluateAnswers, gatherAnswer } from '../../scripts/labs/checks/answer.ts';
import { defineCheck, fact, fail, firstItem, listBySelector, pass, podReady, type KubeList } from '../../scripts/labs/checks/index.ts';
import { gatherNodeRules, isVerdict, nodePortFrontend } from '../../scripts/labs/checks/node-rules.ts';
import type { RulesObservation } from '../../scripts/labs/checks/rules.ts';
import type { EvalContext, Fact, GatherContext, Verdict } from '../../scripts/labs/checks/types.ts';
import { observationsOf, schemas } from '../../scripts/labs/checks/schemas.ts';
import type { Mode } from '../../scripts/catalogue/modes.ts';

/** The ConfigMaps the learner writes the findings into. */
export const LOCAL_ANSWER = 'nodeport-local';
export const CLUSTER_ANSWER = 'nodeport-cluster';

const nodePortPathSchema = observationsOf({
  pods: schemas.kubeList,
  /** The rules of the node that runs web's pods (null: no pod is ready anywhere). */
  withPod: schemas.rules.nullable(),
  /** The rules of a node without a web pod (null: every node runs one). */
  withoutPod: schemas.rules.nullable(),
  answer: schemas.answer,
});
export type NodePortPathObservation = z.infer<typeof nodePortPathSchema>;

/** Nodes running a ready web pod, sorted. */
function podNodes(pods: KubeList): string[] {
  return [...new Set((pods.items ?? []).filter(podReady).map((p) => String(p.spec?.nodeName ?? '')))].filter(Boolean).sort();
}

/** `ip:port` of the ready web pods on `node` (agnhost listens on 8080: the Service's targetPort). */
function podTargets(pods: KubeList, node: string | null): string[] {
  return (pods.items ?? [])
    .filter((p) => podReady(p) && (node === null || p.spec?.nodeName === node) && p.status?.podIP)
    .map((p) => `${String(p.status?.podIP)}:8080`)
    .sort();
}

/**
 * Which two nodes to read: the pods' node (the first worker, in the lab), and a node without a
 * pod, the second worker when it has none (the instructions read those two), else any such node.
 */
export function pickNodes(nodes: readonly string[], hosts: readonly string[]): { withPod: string | null; withoutPod: string | null } {
  const empty = nodes.filter((n) => !hosts.includes(n));
  return {
    withPod: hosts.find((n) => n.endsWith('-worker')) ?? hosts[0] ?? null,
    withoutPod: empty.find((n) => n.endsWith('-worker2')) ?? empty.find((n) => !n.endsWith('-control-plane')) ?? empty[0] ?? null,
  };
}

function gatherPath(configMap: string) {
  return async (ctx: GatherContext): Promise<NodePortPathObservation> => {
    const [nodes, pods, answer] = await Promise.all([
      ctx.cluster.nodes({ signal: ctx.signal }),
      listBySelector(ctx, 'pods', 'app=web'),
      gatherAnswer(ctx, configMap),
    ]);
    const pick = pickNodes(nodes, podNodes(pods));
    const [withPod, withoutPod] = await Promise.all([
      pick.withPod ? gatherNodeRules(ctx, 'web', pick.withPod) : null,
      pick.withoutPod ? gatherNodeRules(ctx, 'web', pick.withoutPod) : null,
    ]);
    return { pods, withPod, withoutPod, answer };
  };
}

const KUBE_PROXY: ReadonlySet<Mode> = new Set(['iptables', 'nftables']);

/** How each mode names its chains: the external chain, the Local and the Cluster chain, the filter hop that drops. */
const NAMES = {
  iptables: {
    external: 'KUBE-EXT-',
    local: 'KUBE-SVL-',
    cluster: 'KUBE-SVC-',
    filter: 'KUBE-EXTERNAL-SERVICES (filter)',
    mark: 'KUBE-MARK-MASQ',
  },
  nftables: {
    external: 'external-',
    local: 'local-',
    cluster: 'service-',
    filter: '@no-endpoint-nodeports (filter)',
    mark: 'mark-for-masquerade',
  },
} as const;

const podsWord = (n: number) => (n === 2 ? 'both pods' : `all ${n} pods`);
const WHO = { all: 'every packet', pods: 'pods', node: 'the node itself' } as const;
const targets = (f: Frontend) => f.backends.map((b) => `${b.ip}:${b.port}`).sort();
const sameList = (a: string[], b: string[]) => a.join(' ') === b.join(' ');
const hopAfter = (f: Frontend, prefix: string) => f.path[f.path.findIndex((h) => h.startsWith(prefix)) + 1];

type Found = { frontend: Frontend; nodePort: number; node: string };

/** web's NodePort frontend on one node, or the verdict saying why there is nothing to look at. */
function frontendOn(rules: RulesObservation, ctx: EvalContext): Found | Verdict {
  const found = nodePortFrontend(parse, 'web', rules, ctx);
  if (isVerdict(found)) return found;
  if (found.nodePort === undefined)
    return fail('`web` has no NodePort. Apply `etp-local/web-nodeport.yaml` (the earlier step) first.', [
      fact('NodePort of web', 'a port in 30000-32767', 'none', false),
    ]);
  if (!found.frontend)
    return fail(
      `The rules on ${rules.node} have no entry for web's NodePort ${found.nodePort} yet; they follow the Service within seconds.`,
      [fact(`NodePort frontend :${found.nodePort} on ${rules.node}`, 'present', 'none', false)],
      true,
    );
  return { frontend: found.frontend, nodePort: found.nodePort, node: rules.node };
}

/** Both nodes read, the Service as the step needs it; else the verdict. */
function prepare(obs: NodePortPathObservation, ctx: EvalContext, policy: 'Local' | 'Cluster'): { a: Found; b: Found } | Verdict {
  if (!obs.withPod)
    return fail(
      'No web pod is ready on any node. Run web on one node first (the first step: label the worker, apply the Deployment).',
      [fact('nodes running a ready web pod', 'exactly 1', 'none', false)],
      (obs.pods.items ?? []).length > 0,
    );
  if (!obs.withoutPod)
    return fail('Every node runs a web pod, so no node is left without one. Pin web to one node again (the first step).', [
      fact('nodes without a web pod', 'at least 1', 'none', false),
    ]);
  const svc = firstItem(obs.withPod.services);
  const etp = svc?.spec?.externalTrafficPolicy;
  if (svc && (svc.spec?.type !== 'NodePort' || etp !== policy)) {
    const how =
      policy === 'Local'
        ? 'Apply `etp-local/web-nodeport.yaml` (the step before)'
        : `Switch it with \`kubectl -n ${ctx.namespace} patch service web -p '{"spec":{"externalTrafficPolicy":"Cluster"}}'\` (the step before)`;
    return fail(
      `\`web\` is a ${svc.spec?.type ?? '?'} Service with externalTrafficPolicy ${etp ?? '(none)'}; this step reads it as a NodePort with ${policy}. ${how}.`,
      [fact('web: type, externalTrafficPolicy', `NodePort, ${policy}`, `${svc.spec?.type ?? '?'}, ${etp ?? '(none)'}`, false)],
    );
  }
  const a = frontendOn(obs.withPod, ctx);
  if (isVerdict(a)) return a;
  const b = frontendOn(obs.withoutPod, ctx);
  if (isVerdict(b)) return b;
  return { a, b };
}

/** The short-circuit rules of the external chain, in words ("from a pod → KUBE-SVC-…"). */
function shortCircuits(f: Frontend): string[] {
  return (f.external?.rules ?? []).filter((r) => r.action === 'jump').map((r) => `${WHO[r.traffic]} → ${r.target}`);
}

/** The learner's count of the endpoints web's NodePort reaches on a node, under `key`. */
const reaches = (key: string, on: Found) => ({
  key,
  truth: String(on.frontend.backends.length),
  what: `the number of endpoints web's NodePort reaches on ${on.node}`,
});

function evaluateLocalPath(obs: NodePortPathObservation, ctx: EvalContext): Verdict {
  const ready = prepare(obs, ctx, 'Local');
  if (isVerdict(ready)) return ready;
  const { a, b } = ready;
  const local = podTargets(obs.pods, a.node);
  const facts: Fact[] = [];
  let rulesOk: boolean;
  if (KUBE_PROXY.has(ctx.mode)) {
    const n = NAMES[ctx.mode as 'iptables' | 'nftables'];
    const ext = a.frontend.path.find((h) => h.startsWith(n.external));
    const last = a.frontend.path.at(-1) ?? '';
    const extB = b.frontend.path.find((h) => h.startsWith(n.external));
    facts.push(
      fact(
        `path of outside traffic to :${a.nodePort} on ${a.node} (has the pods)`,
        `… → ${n.external}… → ${n.local}…`,
        a.frontend.path.join(' → '),
        Boolean(ext) && last.startsWith(n.local),
      ),
      fact(`endpoints in ${last || n.local + '…'} on ${a.node}`, local, targets(a.frontend), sameList(targets(a.frontend), local)),
      fact(
        `path of outside traffic to :${b.nodePort} on ${b.node} (no pod)`,
        `… → ${n.external}… (no last jump) → ${n.filter}: drop`,
        `${b.frontend.path.join(' → ')}: ${b.frontend.noBackendVerdict ?? 'no verdict'}`,
        Boolean(extB) &&
          hopAfter(b.frontend, n.external) === n.filter &&
          b.frontend.noBackendVerdict === 'drop' &&
          b.frontend.backends.length === 0,
      ),
      fact(
        `what ${extB ?? n.external + '…'} still sends to the Cluster chain on ${b.node}`,
        `pods and the node itself → ${n.cluster}… (every endpoint)`,
        shortCircuits(b.frontend).length ? shortCircuits(b.frontend) : 'none',
        true,
      ),
    );
    rulesOk = facts.slice(0, 3).every((f) => f.ok);
  } else {
    const twin = b.frontend.internalTwinBackends ?? null;
    facts.push(
      fact(
        `backends of NodePort frontend 0.0.0.0:${a.nodePort} in the agent on ${a.node} (has the pods)`,
        local,
        targets(a.frontend),
        sameList(targets(a.frontend), local),
      ),
      fact(
        `backends of NodePort frontend 0.0.0.0:${b.nodePort} in the agent on ${b.node} (no pod)`,
        'none',
        targets(b.frontend).length ? targets(b.frontend) : 'none',
        b.frontend.backends.length === 0 && b.frontend.localOnly,
      ),
      fact(
        `backends of its in-cluster twin 0.0.0.0:${b.nodePort}/TCP/i on ${b.node}`,
        'every pod (traffic from inside the cluster ignores the policy)',
        twin ?? 'no twin',
        true,
      ),
    );
    rulesOk = facts.slice(0, 2).every((f) => f.ok);
  }
  if (!rulesOk) {
    const wrong = facts.find((f) => !f.ok)!;
    return fail(
      `The rules do not show the Local path yet (${wrong.label}: ${String(wrong.seen)}); they follow the Service and its pods within seconds.`,
      facts,
      true,
    );
  }
  const recorded = evaluateAnswers(LOCAL_ANSWER, [reaches('with-pod', a), reaches('without-pod', b)], obs.answer, ctx);
  const all = [...facts, ...recorded.facts];
  if (recorded.status === 'fail') return { ...recorded, facts: all };
  const n = a.frontend.backends.length;
  if (ctx.mode === 'iptables') {
    const ext = a.frontend.path.find((h) => h.startsWith(NAMES.iptables.external));
    return pass(
      `On ${a.node}, KUBE-NODEPORTS sends :${a.nodePort} to ${ext}, whose last rule jumps to ${a.frontend.path.at(-1)} with the ${n} local pods. On ${b.node} that chain has no such rule (and there is no KUBE-SVL chain at all): only pod and node traffic is sent on, so a packet from outside leaves nat untranslated and the filter table's KUBE-EXTERNAL-SERVICES drops it ("${ctx.namespace}/web has no local endpoints").`,
      all,
    );
  }
  if (ctx.mode === 'nftables') {
    const ext = a.frontend.path.find((h) => h.startsWith(NAMES.nftables.external));
    return pass(
      `On ${a.node}, @service-nodeports sends tcp . ${a.nodePort} to ${ext}, which ends in goto ${a.frontend.path.at(-1)} with the ${n} local pods. On ${b.node} it has no final goto: only pod and node traffic is sent on, so a packet from outside stays untranslated and filter-input drops it through @no-endpoint-nodeports.`,
      all,
    );
  }
  return pass(
    `The agent on ${a.node} lists its ${n} local pods behind NodePort 0.0.0.0:${a.nodePort}; the agent on ${b.node} lists none there (its /i twin, for clients inside the cluster, keeps every pod), so Cilium turns outside connections away on ${b.node}.`,
    all,
  );
}

function evaluateClusterPath(obs: NodePortPathObservation, ctx: EvalContext): Verdict {
  const ready = prepare(obs, ctx, 'Cluster');
  if (isVerdict(ready)) return ready;
  const { a, b } = ready;
  const every = podTargets(obs.pods, null);
  const facts: Fact[] = [];
  let mark = '';
  if (KUBE_PROXY.has(ctx.mode)) {
    const n = NAMES[ctx.mode as 'iptables' | 'nftables'];
    mark = n.mark;
    const ext = b.frontend.path.find((h) => h.startsWith(n.external));
    const marks = (f: Frontend) =>
      (f.external?.rules ?? []).some((r) => r.action === 'masquerade' && r.traffic === 'all' && r.target === n.mark);
    facts.push(
      fact(
        `path of outside traffic to :${b.nodePort} on ${b.node} (no pod)`,
        `… → ${n.external}… → ${n.cluster}…`,
        b.frontend.path.join(' → '),
        Boolean(ext) && (b.frontend.path.at(-1) ?? '').startsWith(n.cluster),
      ),
      fact(`endpoints it reaches on ${b.node}`, every, targets(b.frontend), sameList(targets(b.frontend), every)),
      fact(
        `rules of ${ext ?? n.external + '…'} on ${b.node} before its last jump`,
        `every packet → ${n.mark}`,
        (b.frontend.external?.rules ?? []).map((r) => `${WHO[r.traffic]} → ${r.target}`),
        marks(b.frontend),
      ),
      fact(
        `the same mark on ${a.node} (has the pods)`,
        `every packet → ${n.mark}`,
        marks(a.frontend) ? `every packet → ${n.mark}` : 'none',
        marks(a.frontend),
      ),
    );
  } else {
    facts.push(
      fact(
        `backends of NodePort frontend 0.0.0.0:${b.nodePort} in the agent on ${b.node} (no pod)`,
        every,
        targets(b.frontend),
        sameList(targets(b.frontend), every),
      ),
      fact(`backends of the same frontend on ${a.node} (has the pods)`, every, targets(a.frontend), sameList(targets(a.frontend), every)),
      fact(
        `an in-cluster twin 0.0.0.0:${b.nodePort}/TCP/i on ${b.node}`,
        'none (both policies are Cluster: one scope)',
        b.frontend.internalTwinBackends ?? 'none',
        true,
      ),
    );
  }
  const wrong = facts.find((f) => !f.ok);
  if (wrong)
    return fail(
      `The rules do not show the Cluster path yet (${wrong.label}: ${String(wrong.seen)}); they follow the Service within seconds.`,
      facts,
      true,
    );
  const want = [reaches('without-pod', b)];
  if (mark) want.push({ key: 'mark', truth: mark, what: `the chain web's external chain sends every packet to first` });
  const recorded = evaluateAnswers(CLUSTER_ANSWER, want, obs.answer, ctx);
  const all = [...facts, ...recorded.facts];
  if (recorded.status === 'fail') return { ...recorded, facts: all };
  const n = b.frontend.backends.length;
  if (ctx.mode === 'iptables') {
    const ext = b.frontend.path.find((h) => h.startsWith(NAMES.iptables.external));
    return pass(
      `${ext} now starts with -j KUBE-MARK-MASQ for every packet ("masquerade traffic for ${ctx.namespace}/web external destinations"), then jumps to ${b.frontend.path.at(-1)} with ${podsWord(n)}. KUBE-POSTROUTING masquerades what carries the mark, so the pods see a node's address; ${a.node} has the same rule, which is why even its own pods lose yours.`,
      all,
    );
  }
  if (ctx.mode === 'nftables') {
    const ext = b.frontend.path.find((h) => h.startsWith(NAMES.nftables.external));
    return pass(
      `${ext} now starts with jump mark-for-masquerade for every packet, then goto ${b.frontend.path.at(-1)} with ${podsWord(n)}. The masquerading chain in nat-postrouting rewrites what carries the mark, so the pods see a node's address; ${a.node} has the same rule.`,
      all,
    );
  }
  return pass(
    `With Cluster the agent on ${b.node} lists ${podsWord(n)} behind NodePort 0.0.0.0:${b.nodePort}, though they run on ${a.node}: it forwards there and SNATs in eBPF, with no mark and no iptables chain. The agent on ${a.node} lists the same pods, and sends to its own without SNAT.`,
    all,
  );
}

export const localPathCheck = defineCheck({
  observations: nodePortPathSchema,
  gather: gatherPath(LOCAL_ANSWER),
  evaluate: evaluateLocalPath,
});

export const clusterPathCheck = defineCheck({
  observations: nodePortPathSchema,
  gather: gatherPath(CLUSTER_ANSWER),
  evaluate: evaluateClusterPath,
});
