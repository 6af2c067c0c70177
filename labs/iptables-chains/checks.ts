/**
 * Checks of iptables-chains: the probabilities of the statistic rules, how the rules grow when
 * web scales, and the conntrack entries each connection through the ClusterIP leaves behind.
 */
import { parse } from '../../scripts/dataplane/index.ts';
import { kubeProxyProbabilities, iptablesSavedProbability } from '../../scripts/dataplane/shares.ts';
import type { Frontend } from '../../scripts/dataplane/model.ts';
import { evaluateAnswer, gatherAnswer } from '../../scripts/labs/checks/answer.ts';
import { conntrackUsage, gatherConntrack, parseConntrack } from '../../scripts/labs/checks/conntrack.ts';
import { defineCheck, evaluateDeployment, fact, fail, firstItem, getByName, pass } from '../../scripts/labs/checks/index.ts';
import { gatherNodeRules, isVerdict, pickNode, serviceFrontend } from '../../scripts/labs/checks/node-rules.ts';
import type { RulesObservation } from '../../scripts/labs/checks/rules.ts';
import type { EvalContext, Fact, Verdict } from '../../scripts/labs/checks/types.ts';
import { observationsOf, schemas } from '../../scripts/labs/checks/schemas.ts';

const NODE_ROLE = 'worker';
export const SCALED = 5;

/** The `--probability` values of a KUBE-SVC chain, in rule order, as iptables-save prints them. */
function probabilities(f: Frontend): string[] {
  return f.backends.flatMap((b) => (b.detail?.startsWith('probability ') ? [b.detail.slice('probability '.length)] : []));
}

/** What kube-proxy writes for n endpoints: 1/n, 1/(n−1), … 1/2, as iptables-save prints them. */
function expectedProbabilities(n: number): string[] {
  return kubeProxyProbabilities(n).flatMap((p) => (p === null ? [] : [iptablesSavedProbability(p)]));
}

function sameNumbers(answer: string, truth: string): boolean {
  const a = answer
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(Number);
  const t = truth.split(/\s+/).filter(Boolean).map(Number);
  return a.length === t.length && a.every((x, i) => Math.abs(x - t[i]) < 1e-4);
}

function frontendOrVerdict(rules: RulesObservation, ctx: EvalContext): Frontend | Verdict {
  const found = serviceFrontend(parse, 'web', rules, ctx);
  if (isVerdict(found)) return found;
  if (found.frontend) return found.frontend;
  return fail(
    `The nat table on ${rules.node} has no KUBE-SVC chain for ${found.key} yet.`,
    [fact(`rules for ${found.key} on ${rules.node}`, 'KUBE-SERVICES → KUBE-SVC-…', 'none', false)],
    true,
  );
}

function chainFacts(f: Frontend, n: number): Fact[] {
  const want = expectedProbabilities(n);
  return [
    fact('endpoints in the chain', n, f.backends.length),
    fact('--probability values, in order', want, probabilities(f)),
    fact(
      'share of each endpoint',
      `1/${n} each`,
      f.backends.map((b) => b.share.toFixed(3)),
      f.backends.length === n && f.backends.every((b) => Math.abs(b.share - 1 / n) < 1e-6),
    ),
  ];
}

export const probabilitiesCheck = defineCheck({
  observations: observationsOf({ rules: schemas.rules, answer: schemas.answer }),
  async gather(ctx) {
    const node = await pickNode(ctx, NODE_ROLE);
    const [rules, answer] = await Promise.all([gatherNodeRules(ctx, 'web', node), gatherAnswer(ctx, 'web-probabilities')]);
    return { rules, answer };
  },
  evaluate(obs, ctx) {
    const fe = frontendOrVerdict(obs.rules, ctx);
    if (isVerdict(fe)) return fe;
    const facts = chainFacts(fe, fe.backends.length);
    const truth = probabilities(fe).join(' ');
    const answer = evaluateAnswer(
      {
        configMap: 'web-probabilities',
        key: 'probabilities',
        truth,
        what: "the --probability values of web's KUBE-SVC chain",
        same: sameNumbers,
      },
      obs.answer,
      ctx,
    );
    const all = [fact('chain', 'KUBE-SVC-…', fe.path.join(' → '), true), ...facts, ...answer.facts];
    if (answer.status === 'fail') return { ...answer, facts: all };
    return pass(
      `Right: ${truth}, then a last rule with no statistic match. The first rule takes 1/${fe.backends.length} of all connections, the next half of the rest, and the last whatever is left: an equal share each.`,
      all,
    );
  },
});

/**
 * Why `count` lines name a Service with `endpoints` endpoints. kube-proxy always comments the two
 * "cluster IP" rules (the KUBE-SERVICES match and the masquerade mark in KUBE-SVC); the jumps to
 * the endpoint chains and both rules inside each KUBE-SEP chain are commented only while the
 * cluster has at most 1,000 endpoints (appendServiceCommentLocked in kube-proxy's iptables
 * proxier). Above that, its large cluster mode (leftovers of scale-compare bring it about), they
 * carry no comment.
 */
function rulesNamingExplained(count: number, endpoints: number): string {
  if (count === 2 + 3 * endpoints)
    return `${count} rules for one Service with ${endpoints} endpoints: the KUBE-SERVICES match, the masquerade mark, one jump per endpoint and two rules in each KUBE-SEP chain (2 + 3 × ${endpoints}).`;
  if (count === 2)
    return `Only 2 rules name the Service: the KUBE-SERVICES match and the masquerade mark. The cluster has more than 1,000 endpoints, so kube-proxy is in its large cluster mode and writes the ${endpoints} jumps and the ${2 * endpoints} KUBE-SEP rules behind them without a comment (2 + 3 × ${endpoints} rules are still there; \`iptables-save -t nat | grep -c KUBE-SEP\` counts them).`;
  return `${count} rules name the Service with ${endpoints} endpoints.`;
}

/** Lines of the dump that name the Service, as `iptables-save | grep -c '<ns>/web'` counts them. */
function rulesNaming(dump: string, key: string): number {
  return dump.split('\n').filter((l) => l.startsWith('-A ') && l.includes(key)).length;
}

export const scaleCheck = defineCheck({
  observations: observationsOf({ deployment: schemas.deployment, rules: schemas.rules, answer: schemas.answer }),
  async gather(ctx) {
    const node = await pickNode(ctx, NODE_ROLE);
    const [deployments, rules, answer] = await Promise.all([
      getByName(ctx, 'deployments', 'web'),
      gatherNodeRules(ctx, 'web', node),
      gatherAnswer(ctx, 'web-rules'),
    ]);
    return { deployment: { deployments }, rules, answer };
  },
  evaluate(obs, ctx) {
    const d = evaluateDeployment('web', { replicas: SCALED }, obs.deployment, ctx);
    if (d.status === 'fail')
      return d.pending
        ? d
        : { ...d, message: `${d.message} Scale it with \`kubectl -n ${ctx.namespace} scale deployment web --replicas=${SCALED}\`.` };
    const fe = frontendOrVerdict(obs.rules, ctx);
    if (isVerdict(fe)) return fe;
    const facts = [...d.facts, ...chainFacts(fe, SCALED)];
    const wrong = facts.find((f) => !f.ok);
    if (wrong)
      return fail(`kube-proxy has not rewritten web's chain for ${SCALED} endpoints yet (${wrong.label}: ${wrong.seen}).`, facts, true);
    const key = `${ctx.namespace}/web`;
    const count = rulesNaming(obs.rules.dump.stdout, key);
    const answer = evaluateAnswer(
      { configMap: 'web-rules', key: 'count', truth: String(count), what: `the number of rules naming ${key}` },
      obs.answer,
      ctx,
    );
    const all = [...facts, ...answer.facts];
    if (answer.status === 'fail') return { ...answer, facts: all };
    return pass(`${rulesNamingExplained(count, SCALED)} Every Service adds its own, and every change rewrites them.`, all);
  },
});

export const conntrackCheck = defineCheck({
  observations: observationsOf({
    client: schemas.kubeList,
    services: schemas.kubeList,
    conntrack: schemas.conntrack.nullable(),
    answer: schemas.answer,
  }),
  async gather(ctx) {
    const [client, services, answer] = await Promise.all([
      getByName(ctx, 'pods', 'client'),
      getByName(ctx, 'services', 'web'),
      gatherAnswer(ctx, 'conntrack'),
    ]);
    const node: string | undefined = firstItem(client)?.spec?.nodeName;
    const ip: string | undefined = firstItem(services)?.spec?.clusterIP;
    return { client, services, answer, conntrack: node && ip ? await gatherConntrack(ctx, node, ip) : null };
  },
  evaluate(obs, ctx) {
    const clusterIP: string | undefined = firstItem(obs.services)?.spec?.clusterIP;
    if (!firstItem(obs.client) || !obs.conntrack || !clusterIP) {
      return fail(`The \`client\` pod or the \`web\` Service is missing from \`${ctx.namespace}\`; reset the lab to recreate them.`, [
        fact('client pod and web Service', 'present', 'missing', false),
      ]);
    }
    const ct = obs.conntrack;
    if (ct.list.exitCode !== 0)
      return fail(`\`conntrack -L\` failed on ${ct.node} (exit code ${ct.list.exitCode}).`, [
        fact(`conntrack -L -d ${clusterIP} on ${ct.node}`, 'a list', ct.list.stderr.trim() || 'failed', false),
      ]);
    const entries = parseConntrack(ct.list.stdout).filter((e) => e.original.dst === clusterIP);
    const pods = [...new Set(entries.flatMap((e) => (e.reply ? [`${e.reply.src}:${e.reply.sport}`] : [])))].sort();
    const { count, max } = conntrackUsage(ct);
    const facts = [
      fact(`conntrack entries to ${clusterIP} on ${ct.node} (the client's node)`, 'at least 1', entries.length, entries.length > 0),
      fact(
        'where the replies come from (after DNAT)',
        'web pods on :8080',
        pods,
        pods.length > 0 && !pods.some((p) => p.startsWith(`${clusterIP}:`)),
      ),
      fact(
        'nf_conntrack_count / nf_conntrack_max',
        'count below max',
        `${count ?? '?'} / ${max ?? '?'}`,
        count !== null && max !== null && count < max,
      ),
    ];
    if (entries.length === 0) {
      return fail(
        `No conntrack entries for ${clusterIP} on ${ct.node}. Send a few requests from \`client\` to http://web/ first; entries of closed connections expire after about two minutes.`,
        facts,
      );
    }
    const answer = evaluateAnswer(
      { configMap: 'conntrack', key: 'max', truth: String(max ?? '?'), what: `nf_conntrack_max on ${ct.node}` },
      obs.answer,
      ctx,
    );
    const all = [...facts, ...answer.facts];
    if (answer.status === 'fail') return { ...answer, facts: all };
    return pass(
      `${entries.length} conntrack entr${entries.length === 1 ? 'y' : 'ies'} for ${clusterIP} on ${ct.node}, each remembering which pod the connection was sent to. When the table reaches ${max}, new connections are dropped.`,
      all,
    );
  },
});
