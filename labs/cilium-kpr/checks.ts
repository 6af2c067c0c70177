/**
 * cilium-kpr's checks: the learner's recorded findings compared with what the agent and a node
 * show, and Hubble's flows to web after a request from the client pod.
 */
import { allFlows, describeFlow, gatherHubble } from '../../scripts/labs/checks/hubble.ts';
import { gatherConfigMap, type ConfigMapObservation } from '../../scripts/labs/checks/configmap.ts';
import { evaluateAnswer, type AnswerExpectation } from '../../scripts/labs/checks/answer.ts';
import {
  defineCheck,
  evaluateProxyMode,
  fact,
  fail,
  gatherNodeCommand,
  gatherPodCommand,
  gatherProxyMode,
  kubeProxyReplacement,
  pass,
  podNotUsable,
  socketLB,
} from '../../scripts/labs/checks/index.ts';
import type { EvalContext, Fact, Verdict } from '../../scripts/labs/checks/types.ts';
import { z } from 'zod';
import { observationsOf, schemas } from '../../scripts/labs/checks/schemas.ts';

/** The answer the learner wrote down (evaluateAnswer's wording), after the facts the check read itself. */
function recorded(obs: ConfigMapObservation, want: AnswerExpectation, facts: Fact[], ctx: EvalContext): Verdict | undefined {
  const answer = evaluateAnswer(want, obs, ctx);
  facts.push(...answer.facts);
  return answer.status === 'fail' ? { ...answer, facts } : undefined;
}

export const kprCheck = defineCheck({
  observations: observationsOf({ agent: schemas.proxyMode, answer: schemas.configMap }),
  async gather(ctx) {
    const [agent, answer] = await Promise.all([gatherProxyMode(ctx), gatherConfigMap(ctx, 'kpr')]);
    return { agent, answer };
  },
  evaluate(obs, ctx) {
    const agent = evaluateProxyMode(obs.agent, ctx);
    if (agent.status === 'fail') return agent;
    const seen = obs.agent.kind === 'cilium' ? (kubeProxyReplacement(obs.agent.status.stdout) ?? '') : '';
    const wrong = recorded(
      obs.answer,
      { configMap: 'kpr', key: 'KubeProxyReplacement', truth: seen, what: 'KubeProxyReplacement' },
      agent.facts,
      ctx,
    );
    const socket = obs.agent.kind === 'cilium' ? socketLB(obs.agent.status.stdout) : null;
    const how = !socket
      ? ' (`cilium-dbg status --verbose` did not say whether socket-level load balancing is on.)'
      : socket.startsWith('Enabled')
        ? ` Socket LB is ${socket}: a pod's connect() to a ClusterIP gets a backend's address before any packet leaves it.`
        : ` Socket LB is ${socket}: the programs on each pod's interface translate a Service's packets one by one.`;
    return (
      wrong ??
      pass(
        `Right: no kube-proxy runs here, and the Cilium agent reports KubeProxyReplacement: True. Its eBPF programs implement every Service.${how}`,
        agent.facts,
      )
    );
  },
});

/** Counts of iptables lines on a node: kube-proxy's Service chains and Cilium's own chains. */
const IPTABLES_COUNTS = [
  'sh',
  '-c',
  'echo KUBE-SVC=$(iptables-save | grep -c KUBE-SVC); echo CILIUM=$(iptables-save | grep -c CILIUM_)',
] as const;

function parseCounts(stdout: string): Record<string, number> {
  return Object.fromEntries([...stdout.matchAll(/^([\w-]+)=(\d+)\s*$/gm)].map((m) => [m[1], Number(m[2])]));
}

export const noKubeRulesCheck = defineCheck({
  observations: observationsOf({ node: z.string(), counts: schemas.command, answer: schemas.configMap }),
  async gather(ctx) {
    const all = await ctx.cluster.nodes({ signal: ctx.signal });
    const node = all.find((n) => n.endsWith('-worker')) ?? all[0];
    const [counts, answer] = await Promise.all([gatherNodeCommand(ctx, node, IPTABLES_COUNTS), gatherConfigMap(ctx, 'kube-svc-rules')]);
    return { node, counts, answer };
  },
  evaluate(obs, ctx) {
    const c = parseCounts(obs.counts.stdout);
    if (obs.counts.exitCode !== 0 || c['KUBE-SVC'] === undefined) {
      return fail(`Could not read iptables-save on ${obs.node}.`, [
        fact(`iptables-save on ${obs.node}`, 'readable', obs.counts.stderr.trim() || `exit code ${obs.counts.exitCode}`, false),
      ]);
    }
    const facts = [
      fact(`lines mentioning KUBE-SVC on ${obs.node}`, 0, c['KUBE-SVC']),
      fact(`lines mentioning CILIUM_ chains on ${obs.node}`, 'any (Cilium keeps a few for masquerading)', c.CILIUM ?? 0, true),
    ];
    if (!facts[0].ok)
      return fail(`${obs.node} still has ${c['KUBE-SVC']} KUBE-SVC lines: leftovers from kube-proxy would compete with Cilium.`, facts);
    const wrong = recorded(
      obs.answer,
      { configMap: 'kube-svc-rules', key: 'count', truth: String(c['KUBE-SVC']), what: 'the number of KUBE-SVC lines' },
      facts,
      ctx,
    );
    return (
      wrong ??
      pass(
        `No KUBE-SVC chains on ${obs.node}: Services are not in iptables here. The ${c.CILIUM ?? 0} CILIUM_ lines are Cilium's own housekeeping (masquerading, proxy redirects), not Service rules.`,
        facts,
      )
    );
  },
});

export const hubbleCheck = defineCheck({
  observations: observationsOf({ client: schemas.podCommand, hubble: schemas.hubble.optional() }),
  settleMs: 20_000,
  async gather(ctx) {
    // The check sends nothing itself: the flows it looks for are the ones the learner's own
    // requests from client left in the agents' buffers. `true` only proves the pod runs.
    const client = await gatherPodCommand(ctx, 'client', ['true']);
    if (!client.result) return { client };
    // Pod filters are name prefixes: `web-` is every pod of the web Deployment. (`--to-service`
    // matches only socket-level trace events, which a real 1.19.4 agent did not emit for these
    // TCP connections; the packets to web's pods are always there.)
    return { client, hubble: await gatherHubble(ctx, ['--from-pod', `${ctx.namespace}/client`, '--to-pod', `${ctx.namespace}/web-`]) };
  },
  evaluate(obs, ctx) {
    const notUsable = podNotUsable(
      'client',
      obs.client,
      ctx,
      `Start it with \`kubectl -n ${ctx.namespace} apply -f cilium-kpr/client.yaml\`.`,
    );
    if (notUsable) return notUsable;
    const { flows, failed } = allFlows(obs.hubble ?? { agents: [] });
    const facts: Fact[] = [];
    if (failed.length) {
      facts.push(fact('hubble observe in every Cilium agent', 'works', failed, false));
      return fail(
        'Hubble did not answer in the Cilium agents. Enable it (`cilium hubble enable`, or Helm value `hubble.enabled=true`) and try again.',
        facts,
      );
    }
    const pre = flows.filter((f) => f.sock_xlate_point?.includes('PRE')).length;
    facts.push(
      fact(
        `flows from client to the pods of ${ctx.namespace}/web (hubble observe --from-pod … --to-pod …/web-)`,
        'at least 1',
        flows.length,
        flows.length > 0,
      ),
    );
    if (flows.length)
      facts.push(
        fact('latest flows', 'any', flows.slice(-3).map(describeFlow), true),
        fact('connect() calls translated at the socket (pre-xlate-fwd)', 'any', pre, true),
      );
    if (!flows.length)
      return fail(
        `Hubble shows no flow from client to web's pods yet. Send a few requests from the client pod (\`kubectl -n ${ctx.namespace} exec client -- curl -s http://web/hostname\`): the check sends none itself.`,
        facts,
        true,
      );
    const how = pre ? `: ${pre} connect() call${pre === 1 ? '' : 's'} to its ClusterIP, each rewritten to a pod address at the socket` : '';
    return pass(`Hubble shows ${flows.length} flow${flows.length === 1 ? '' : 's'} from client to web's pods${how}.`, facts);
  },
});
