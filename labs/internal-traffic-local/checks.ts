/**
 * Checks of internal-traffic-local: requests from two client pods, one on the agent's node and
 * one elsewhere, decide who answers. With internalTrafficPolicy Local, a client's node only
 * uses endpoints on that same node, and drops the traffic when it has none.
 */
import {
  defineCheck,
  evaluateServiceSpec,
  fact,
  fail,
  gatherPodCommand,
  getByName,
  listBySelector,
  pass,
  podNotUsable,
  podReady,
  type KubeList,
  type PodCommandObservation,
} from '../../scripts/labs/checks/index.ts';
import type { EvalContext, Fact, Verdict } from '../../scripts/labs/checks/types.ts';
import { z } from 'zod';
import { observationsOf, schemas } from '../../scripts/labs/checks/schemas.ts';

const CLIENTS = ['client-near', 'client-far'] as const;
const REQUESTS = 4;
export const CURL_LOOP = `for i in $(seq 1 ${REQUESTS}); do curl -sS --max-time 2 http://agent/hostname; echo; done`;

const clientsObservationSchema = observationsOf({
  clients: z.record(z.string(), schemas.podCommand),
  agents: schemas.kubeList,
  services: schemas.kubeList,
});
export type ClientsObservation = z.infer<typeof clientsObservationSchema>;

async function gatherClients(ctx: Parameters<typeof gatherPodCommand>[0]): Promise<ClientsObservation> {
  const [near, far, agents, services] = await Promise.all([
    ...CLIENTS.map((c) => gatherPodCommand(ctx, c, ['sh', '-c', CURL_LOOP])),
    listBySelector(ctx, 'pods', 'app=agent'),
    getByName(ctx, 'services', 'agent'),
  ]);
  return {
    clients: { 'client-near': near as PodCommandObservation, 'client-far': far as PodCommandObservation },
    agents: agents as KubeList,
    services: services as KubeList,
  };
}

interface ClientView {
  name: string;
  node: string;
  /** Agent pods that answered, with the node each runs on. */
  answers: { pod: string; node: string }[];
  errors: string[];
  /** Ready agent pods on the client's own node. */
  localAgents: string[];
}

function view(obs: ClientsObservation, ctx: EvalContext): ClientView[] | Verdict {
  const agentNode = new Map(
    (obs.agents.items ?? []).filter(podReady).map((p) => [p.metadata?.name ?? '', String(p.spec?.nodeName ?? '?')]),
  );
  const out: ClientView[] = [];
  for (const name of CLIENTS) {
    const c = obs.clients[name];
    const bad = podNotUsable(name, c, ctx, 'Reset the lab to recreate it.');
    if (bad) return bad;
    const node = c.pod?.node ?? '?';
    const lines = (c.result?.stdout ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    const answers = lines.filter((l) => agentNode.has(l)).map((pod) => ({ pod, node: agentNode.get(pod)! }));
    const errors = [
      ...new Set(
        (c.result?.stderr ?? '')
          .split('\n')
          .map((l) => l.trim().replace(/after \d+ milliseconds/, 'after … ms'))
          .filter(Boolean),
      ),
    ];
    const localAgents = [...agentNode].filter(([, n]) => n === node).map(([p]) => p);
    out.push({ name, node, answers, errors, localAgents });
  }
  return out;
}

const seen = (v: ClientView) =>
  v.answers.length
    ? `${v.answers.length}/${REQUESTS} answered by ${[...new Set(v.answers.map((a) => `${a.pod} (${a.node})`))].join(', ')}`
    : `no answer${v.errors[0] ? ` (${v.errors[0]})` : ''}`;

/** Every client gets every answer, from any node. */
function allAnswer(views: ClientView[]): Fact[] {
  return views.map((v) =>
    fact(`${v.name} on ${v.node} → http://agent/hostname`, `${REQUESTS}/${REQUESTS} answered`, seen(v), v.answers.length === REQUESTS),
  );
}

/** Clients with a local agent get answers from it only; clients without one get nothing. */
function localOnly(views: ClientView[]): Fact[] {
  return views.map((v) => {
    const expected = v.localAgents.length
      ? `${REQUESTS}/${REQUESTS} answered, only by agents on ${v.node}`
      : `no answer (no agent on ${v.node})`;
    const ok = v.localAgents.length ? v.answers.length === REQUESTS && v.answers.every((a) => a.node === v.node) : v.answers.length === 0;
    return fact(`${v.name} on ${v.node} → http://agent/hostname`, expected, seen(v), ok);
  });
}

export const exposeCheck = defineCheck({
  observations: clientsObservationSchema,
  gather: gatherClients,
  evaluate(obs, ctx) {
    const spec = evaluateServiceSpec(
      'agent',
      { type: 'ClusterIP', ports: [{ port: 80, targetPort: 8080 }], selector: { app: 'agent' } },
      obs,
      ctx,
    );
    if (spec.status === 'fail')
      return {
        ...spec,
        message: `${spec.message} Apply it: \`kubectl -n ${ctx.namespace} apply -f internal-traffic-local/agent-service.yaml\`.`,
      };
    const views = view(obs, ctx);
    if (!Array.isArray(views)) return views;
    const facts = [...spec.facts, ...allAnswer(views)];
    const wrong = views.filter((v) => v.answers.length < REQUESTS);
    if (wrong.length)
      return fail(`${wrong.map((v) => v.name).join(' and ')} did not get every answer from http://agent/hostname yet.`, facts, true);
    return pass(
      `Both clients reach the one agent pod on ${views[0].answers[0]?.node}: with the default policy (Cluster), a node forwards to an endpoint on any node.`,
      facts,
    );
  },
});

export const setLocalCheck = defineCheck({
  observations: clientsObservationSchema,
  gather: gatherClients,
  evaluate(obs, ctx) {
    const spec = evaluateServiceSpec('agent', { internalTrafficPolicy: 'Local' }, obs, ctx);
    if (spec.status === 'fail')
      return {
        ...spec,
        message: `${spec.message} Patch it: \`kubectl -n ${ctx.namespace} patch service agent -p '{"spec":{"internalTrafficPolicy":"Local"}}'\`.`,
      };
    const views = view(obs, ctx);
    if (!Array.isArray(views)) return views;
    const facts = [...spec.facts, ...localOnly(views)];
    const wrong = facts.find((f) => !f.ok);
    if (wrong)
      return fail(
        `The policy is Local, but the clients do not behave that way yet (${wrong.label}: ${wrong.seen}); kube-proxy needs a moment to rewrite the rules.`,
        facts,
        true,
      );
    const far = views.find((v) => v.localAgents.length === 0);
    return pass(
      `Local in action: client-near is served by the agent on its own node${far ? `, and ${far.name}'s node ${far.node}, with no agent, drops the traffic instead of forwarding it` : ''}.`,
      facts,
    );
  },
});

export const everywhereCheck = defineCheck({
  observations: clientsObservationSchema.extend({ daemonsets: schemas.kubeList }),
  async gather(ctx) {
    const [clients, daemonsets] = await Promise.all([gatherClients(ctx), getByName(ctx, 'daemonsets', 'agent')]);
    return { ...clients, daemonsets };
  },
  evaluate(obs, ctx) {
    const ds = (obs.daemonsets.items ?? [])[0];
    const dsFact = fact(
      'DaemonSet agent',
      'exists, a ready pod per worker',
      ds ? `${ds.status?.numberReady ?? 0}/${ds.status?.desiredNumberScheduled ?? 0} ready` : 'not found',
      !!ds && (ds.status?.numberReady ?? 0) > 0 && ds.status?.numberReady === ds.status?.desiredNumberScheduled,
    );
    if (!ds)
      return fail(`There is no DaemonSet \`agent\` in \`${ctx.namespace}\` yet: a node-local agent belongs on every node.`, [dsFact]);
    const views = view(obs, ctx);
    if (!Array.isArray(views)) return views;
    const facts = [
      dsFact,
      ...localOnly(views),
      ...views.map((v) => fact(`agent pods on ${v.node}`, 'at least 1', v.localAgents, v.localAgents.length > 0)),
    ];
    const wrong = facts.find((f) => !f.ok);
    if (wrong) return fail(`Not every client is served by its own node's agent yet (${wrong.label}: ${wrong.seen}).`, facts, true);
    return pass(
      'Every client now talks to the agent on its own node, and no request crosses to another node: the pattern internalTrafficPolicy: Local is made for.',
      facts,
    );
  },
});
