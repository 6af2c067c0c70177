/**
 * Checks of session-affinity: `sessionAffinity: ClientIP` on web, the node's memory of it
 * (iptables `-m recent`, IPVS `persistent`), and one client that keeps getting one pod.
 */
import { parse } from '../../scripts/dataplane/index.ts';
import type { Frontend } from '../../scripts/dataplane/model.ts';
import { evaluateAnswer, gatherAnswer } from '../../scripts/labs/checks/answer.ts';
import {
  defineCheck,
  evaluateServiceSpec,
  fact,
  fail,
  firstItem,
  gatherPodCommand,
  listBySelector,
  pass,
  podNotUsable,
  podReady,
  type KubeList,
} from '../../scripts/labs/checks/index.ts';
import { gatherNodeRules, isVerdict, pickNode, serviceFrontend } from '../../scripts/labs/checks/node-rules.ts';
import type { RulesObservation } from '../../scripts/labs/checks/rules.ts';
import type { EvalContext, Verdict } from '../../scripts/labs/checks/types.ts';
import { observationsOf, schemas } from '../../scripts/labs/checks/schemas.ts';

const NODE_ROLE = 'worker';
const REQUESTS = 10;
export const CURL_LOOP = `for i in $(seq 1 ${REQUESTS}); do curl -sS --max-time 2 http://web/hostname; echo; done`;
/** Kernel HZ values in common use; /proc/net/ip_vs prints persistence in jiffies (seconds × HZ). */
const HZ_CANDIDATES = [100, 250, 300, 1000];
const DEFAULT_TIMEOUT = 10800;

/** The Service's affinity timeout (default 10800 s when ClientIP is set without a config). */
function specTimeout(services: KubeList): number | null {
  const spec = firstItem(services)?.spec;
  if (spec?.sessionAffinity !== 'ClientIP') return null;
  return spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_TIMEOUT;
}

/** Parse the node's dump; for /proc/net/ip_vs keep persistence in raw jiffies (hz 1) and convert below. */
function frontendOf(rules: RulesObservation, ctx: EvalContext): Frontend | Verdict {
  const found = serviceFrontend(parse, 'web', rules, ctx, rules.format === 'proc-ip-vs' ? { hz: 1 } : {});
  if (isVerdict(found)) return found;
  if (found.frontend) return found.frontend;
  return fail(
    `The node ${rules.node} has no rules for ${found.key} yet.`,
    [fact(`rules for ${found.key}`, 'present', 'none', false)],
    true,
  );
}

/** Seconds of affinity the node enforces, and how the tool shows it. */
function nodeTimeout(f: Frontend, format: string, spec: number | null): { seconds: number | null; shown: string } {
  if (!f.affinity) return { seconds: null, shown: 'no affinity' };
  const raw = f.affinity.timeoutSeconds;
  if (format !== 'proc-ip-vs') return { seconds: raw, shown: `-m recent --rcheck --seconds ${raw}` };
  const hz = HZ_CANDIDATES.find((h) => spec !== null && raw === spec * h) ?? 250;
  return { seconds: raw / hz, shown: `persistent ${raw} (jiffies, HZ ${hz}: ${raw / hz} s)` };
}

const mechanism = (mode: string) => (mode === 'ipvs' ? 'IPVS `persistent`' : 'iptables `-m recent`');

export const setAffinityCheck = defineCheck({
  observations: observationsOf({ rules: schemas.rules }),
  async gather(ctx) {
    return { rules: await gatherNodeRules(ctx, 'web', await pickNode(ctx, NODE_ROLE)) };
  },
  evaluate(obs, ctx) {
    const spec = evaluateServiceSpec('web', { sessionAffinity: 'ClientIP' }, { services: obs.rules.services }, ctx);
    if (spec.status === 'fail')
      return {
        ...spec,
        message: `${spec.message} Patch it: \`kubectl -n ${ctx.namespace} patch service web -p '{"spec":{"sessionAffinity":"ClientIP"}}'\`.`,
      };
    const fe = frontendOf(obs.rules, ctx);
    if (isVerdict(fe)) return fe;
    const want = specTimeout(obs.rules.services);
    const seen = nodeTimeout(fe, obs.rules.format, want);
    const facts = [
      ...spec.facts,
      fact(`affinity in the rules on ${obs.rules.node}`, `${mechanism(ctx.mode)}, ${want} s`, seen.shown, seen.seconds === want),
    ];
    if (!facts[facts.length - 1].ok)
      return fail(`The Service asks for ClientIP affinity, but the rules on ${obs.rules.node} do not show it yet.`, facts, true);
    return pass(`web has sessionAffinity ClientIP, and the node enforces it with ${mechanism(ctx.mode)} for ${want} s.`, facts);
  },
});

/**
 * Once step 1 set ClientIP affinity, one pod answers every request whatever the learner does (a
 * real cluster shows it at once), so the evidence of this step is the answer: which pod it is.
 */
export const onePodCheck = defineCheck({
  observations: observationsOf({ client: schemas.podCommand, web: schemas.kubeList, answer: schemas.configMap }),
  async gather(ctx) {
    const [client, web, answer] = await Promise.all([
      gatherPodCommand(ctx, 'client', ['sh', '-c', CURL_LOOP]),
      listBySelector(ctx, 'pods', 'app=web'),
      gatherAnswer(ctx, 'affinity-pod'),
    ]);
    return { client, web, answer };
  },
  evaluate(obs, ctx) {
    const notUsable = podNotUsable('client', obs.client, ctx, 'Reset the lab to recreate it.');
    if (notUsable) return notUsable;
    const webPods = new Set((obs.web.items ?? []).filter(podReady).map((p) => p.metadata?.name ?? ''));
    const names = (obs.client.result?.stdout ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => webPods.has(l));
    const distinct = [...new Set(names)].sort();
    const facts = [
      fact(`answers to ${REQUESTS} requests from client`, REQUESTS, names.length),
      fact('different web pods that answered', 1, distinct.length),
    ];
    if (names.length === 0) return fail('The client got no answer from http://web/hostname. Are the web pods ready?', facts);
    if (distinct.length > 1)
      return fail(
        `${distinct.length} different pods answered (${distinct.join(', ')}): new connections are still spread over the pods. Set sessionAffinity: ClientIP on web first.`,
        facts,
      );
    if (names.length < REQUESTS) return fail(`Only ${names.length} of ${REQUESTS} requests got an answer.`, facts, true);
    const answer = evaluateAnswer(
      { configMap: 'affinity-pod', key: 'pod', truth: distinct[0], what: 'the pod that answers every request' },
      obs.answer,
      ctx,
    );
    if (answer.status === 'fail') return { ...answer, facts: [...facts, ...answer.facts] };
    return pass(
      `All ${REQUESTS} requests went to ${distinct[0]}: the node remembers the client's IP and sends each new connection to the same pod.`,
      [...facts, ...answer.facts],
    );
  },
});

export const affinityRulesCheck = defineCheck({
  observations: observationsOf({ rules: schemas.rules, answer: schemas.answer }),
  async gather(ctx) {
    const node = await pickNode(ctx, NODE_ROLE);
    const [rules, answer] = await Promise.all([gatherNodeRules(ctx, 'web', node), gatherAnswer(ctx, 'affinity')]);
    return { rules, answer };
  },
  evaluate(obs, ctx) {
    const fe = frontendOf(obs.rules, ctx);
    if (isVerdict(fe)) return fe;
    const want = specTimeout(obs.rules.services);
    const seen = nodeTimeout(fe, obs.rules.format, want);
    const ruleFact = fact(`affinity in the rules on ${obs.rules.node}`, mechanism(ctx.mode), seen.shown, seen.seconds !== null);
    if (seen.seconds === null)
      return fail(`The rules on ${obs.rules.node} show no affinity for web; set sessionAffinity: ClientIP first (step 1).`, [ruleFact]);
    const answer = evaluateAnswer(
      { configMap: 'affinity', key: 'seconds', truth: String(seen.seconds), what: 'how long the node remembers a client (seconds)' },
      obs.answer,
      ctx,
    );
    const facts = [ruleFact, ...answer.facts];
    if (answer.status === 'fail') return { ...answer, facts };
    const why =
      seen.seconds === DEFAULT_TIMEOUT
        ? ' (three hours, the default of sessionAffinityConfig.clientIP.timeoutSeconds)'
        : ", the Service's sessionAffinityConfig.clientIP.timeoutSeconds";
    return pass(`Right: ${seen.seconds} s${why}; a client silent for longer is balanced afresh.`, facts);
  },
});
