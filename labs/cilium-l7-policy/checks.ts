/**
 * cilium-l7-policy's checks: HTTP requests from the frontend pod (what status each gets), the
 * CiliumNetworkPolicy itself, and Hubble's DROPPED flows after a request from a pod the policy
 * does not admit.
 */
import { allFlows, describeFlow, gatherHubble } from '../../scripts/labs/checks/hubble.ts';
import {
  defineCheck,
  fact,
  fail,
  firstItem,
  gatherPodCommand,
  getByName,
  pass,
  podNotUsable,
  type EvalContext,
  type Fact,
  type PodCommandObservation,
  type Verdict,
} from '../../scripts/labs/checks/index.ts';
import { observationsOf, schemas } from '../../scripts/labs/checks/schemas.ts';

const API = 'http://api:8080';
/** The requests the checks send: one the policy allows and two it refuses (path, then method). */
const REQUESTS = [
  { method: 'GET', path: '/api/v1/hostname', allowed: true },
  { method: 'GET', path: '/hostname', allowed: false },
  { method: 'POST', path: '/api/v1/hostname', allowed: false },
] as const;

/** Prints `GET /hostname 403` per request; 000 is curl's code for "no HTTP answer" (timeout, refused). */
const REQUEST_SCRIPT = REQUESTS.map(
  (r) => `echo "${r.method} ${r.path} $(curl -s -o /dev/null -w '%{http_code}' --max-time 3 -X ${r.method} ${API}${r.path})"`,
).join('; ');

function statusCodes(stdout: string): Record<string, string> {
  return Object.fromEntries([...stdout.matchAll(/^(GET|POST|PUT|DELETE) (\S+) (\d{3})\s*$/gm)].map((m) => [`${m[1]} ${m[2]}`, m[3]]));
}

/** A lab pod (`frontend`, `other`) missing or not Ready, with how to start it from the lab's manifests. */
function labPodNotUsable(pod: 'frontend' | 'other', obs: PodCommandObservation, ctx: EvalContext): Verdict | undefined {
  return podNotUsable(pod, obs, ctx, `Start it with \`kubectl -n ${ctx.namespace} apply -f cilium-l7-policy/${pod}.yaml\`.`);
}

const codeText = (c: string | undefined) =>
  c === undefined ? 'not run' : c === '000' ? 'no answer' : c === '403' ? '403 (Access denied)' : c;

/** Step 1: before any policy, the frontend gets real answers from api on every request. */
export const baselineCheck = defineCheck({
  observations: observationsOf({ frontend: schemas.podCommand }),
  async gather(ctx) {
    return { frontend: await gatherPodCommand(ctx, 'frontend', ['sh', '-c', REQUEST_SCRIPT]) };
  },
  evaluate(obs, ctx) {
    const notUsable = labPodNotUsable('frontend', obs.frontend, ctx);
    if (notUsable) return notUsable;
    const codes = statusCodes(obs.frontend.result?.stdout ?? '');
    const facts = REQUESTS.map((r) => {
      const c = codes[`${r.method} ${r.path}`];
      return fact(
        `frontend: ${r.method} ${API}${r.path}`,
        'an answer from api (no policy yet)',
        codeText(c),
        c !== undefined && c !== '000' && c !== '403',
      );
    });
    const wrong = facts.filter((f) => !f.ok);
    if (wrong.length)
      return fail(
        `Not every request from frontend reached api: ${wrong.map((f) => `${f.label.split(': ')[1]} → ${f.seen}`).join('; ')}. Is a policy already in place, or is api not ready?`,
        facts,
      );
    return pass(
      'Without a policy, frontend reaches api with any method and path: Cilium allows everything until a policy selects the pod.',
      facts,
    );
  },
});

/** Step 2: the policy exists, GET /api/v1/… passes the proxy, anything else gets the proxy's 403. */
export const l7Check = defineCheck({
  observations: observationsOf({ policy: schemas.kubeList, frontend: schemas.podCommand }),
  async gather(ctx) {
    const [policy, frontend] = await Promise.all([
      getByName(ctx, 'ciliumnetworkpolicies', 'api-l7'),
      gatherPodCommand(ctx, 'frontend', ['sh', '-c', REQUEST_SCRIPT]),
    ]);
    return { policy, frontend };
  },
  evaluate(obs, ctx) {
    const cnp = firstItem(obs.policy);
    const rules = (cnp?.spec?.ingress ?? []).flatMap((i) =>
      (i.toPorts ?? []).flatMap((t) => (t.rules?.http ?? []).map((h) => `${h.method ?? '*'} ${h.path ?? '*'}`)),
    );
    const facts: Fact[] = [
      fact(
        'CiliumNetworkPolicy api-l7',
        'exists with an http rule',
        cnp ? (rules.length ? rules : 'no http rules') : 'not found',
        !!cnp && rules.length > 0,
      ),
    ];
    if (!cnp) return fail(`There is no CiliumNetworkPolicy \`api-l7\` in \`${ctx.namespace}\` yet.`, facts);
    const notUsable = labPodNotUsable('frontend', obs.frontend, ctx);
    if (notUsable) return { ...notUsable, facts: [...facts, ...notUsable.facts] };
    const codes = statusCodes(obs.frontend.result?.stdout ?? '');
    for (const r of REQUESTS) {
      const c = codes[`${r.method} ${r.path}`];
      const ok = r.allowed ? c !== undefined && c !== '000' && c !== '403' : c === '403';
      facts.push(
        fact(`frontend: ${r.method} ${API}${r.path}`, r.allowed ? 'allowed: answered by api' : "403 from Cilium's proxy", codeText(c), ok),
      );
    }
    const wrong = facts.filter((f) => !f.ok);
    if (wrong.length) {
      // A new policy takes a moment to reach the proxy, so a mismatch right after `apply` is worth another look.
      return fail(
        `The policy exists, but requests from frontend do not behave as it says yet: ${wrong.map((f) => `${f.label.split(': ')[1]} got ${f.seen}, expected ${f.expected}`).join('; ')}.`,
        facts,
        true,
      );
    }
    return pass(
      "Cilium's proxy lets GET /api/v1/… through to api and answers every other request from frontend with 403 Access denied.",
      facts,
    );
  },
});

/**
 * Step 3: a pod the policy does not admit is dropped at L3/L4, and Hubble shows the drop. The
 * check sends no request itself: Hubble keeps its flows, so a request of the check's would make
 * the next Check pass without the learner.
 */
export const dropsCheck = defineCheck({
  observations: observationsOf({ other: schemas.podCommand, hubble: schemas.hubble.optional() }),
  settleMs: 20_000,
  async gather(ctx) {
    // `true` only shows that other exists and runs; the drops must come from the learner's requests.
    const other = await gatherPodCommand(ctx, 'other', ['true']);
    if (!other.result) return { other };
    return { other, hubble: await gatherHubble(ctx, ['--namespace', ctx.namespace, '--verdict', 'DROPPED']) };
  },
  evaluate(obs, ctx) {
    const notUsable = labPodNotUsable('other', obs.other, ctx);
    if (notUsable) return notUsable;
    const facts: Fact[] = [];
    const { flows, failed } = allFlows(obs.hubble ?? { agents: [] });
    if (failed.length) {
      facts.push(fact('hubble observe in every Cilium agent', 'works', failed, false));
      return fail(
        'Hubble did not answer in the Cilium agents. Enable it (`cilium hubble enable`, or Helm value `hubble.enabled=true`) and try again.',
        facts,
      );
    }
    const fromOther = flows.filter((f) => f.source?.pod_name === 'other');
    const l7 = flows.filter((f) => f.Type === 'L7');
    facts.push(
      fact(
        'DROPPED flows from other (L3/L4)',
        'at least 1',
        fromOther.length ? fromOther.slice(-2).map(describeFlow) : 0,
        fromOther.length > 0,
      ),
      fact('DROPPED L7 requests (403 from the proxy)', 'any', l7.length ? l7.slice(-2).map(describeFlow) : 0, true),
    );
    if (!fromOther.length)
      return fail(
        `Hubble shows no DROPPED flow from other yet. Send other's request yourself (\`kubectl -n ${ctx.namespace} exec other -- curl -s --max-time 3 ${API}/api/v1/hostname\`): the check sends none, so only yours count. If it gets an answer instead of a timeout, api-l7 is not in place.`,
        facts,
        true,
      );
    return pass(
      `Hubble shows ${fromOther.length} dropped flow${fromOther.length === 1 ? '' : 's'} from other (${fromOther[0].drop_reason_desc ?? 'policy denied'})${l7.length ? ` and ${l7.length} L7 request${l7.length === 1 ? '' : 's'} denied by the proxy` : ''}.`,
      facts,
    );
  },
});
