/**
 * Checks of proxy-mode-rules: the learner reads a node and writes down what it says (the proxy
 * mode, the chain web's ClusterIP leads to, the endpoints at the end of it); each check reads
 * the same node itself and puts the truth beside the answer.
 */
import { parse } from '../../scripts/dataplane/index.ts';
import { evaluateAnswer, gatherAnswer, sameSet } from '../../scripts/labs/checks/answer.ts';
import {
  defineCheck,
  evaluateProxyMode,
  fact,
  fail,
  gatherProxyMode,
  listBySelector,
  pass,
  seenProxyMode,
  SERVICE_NAME_LABEL,
  type KubeList,
} from '../../scripts/labs/checks/index.ts';
import { balancingChain, gatherNodeRules, isVerdict, pickNode, serviceFrontend } from '../../scripts/labs/checks/node-rules.ts';
import type { RulesObservation } from '../../scripts/labs/checks/rules.ts';
import type { EvalContext, Fact, Verdict } from '../../scripts/labs/checks/types.ts';
import { observationsOf, schemas } from '../../scripts/labs/checks/schemas.ts';

/** The node the instructions send the learner to; every node holds the same ClusterIP rules. */
const NODE_ROLE = 'worker';

export const readModeCheck = defineCheck({
  observations: observationsOf({ node: schemas.proxyMode, answer: schemas.answer }),
  async gather(ctx) {
    const [node, answer] = await Promise.all([gatherProxyMode(ctx), gatherAnswer(ctx, 'proxy-mode')]);
    return { node, answer };
  },
  evaluate(obs, ctx) {
    const node = evaluateProxyMode(obs.node, ctx);
    if (node.status === 'fail') return node;
    const mode = seenProxyMode(obs.node) ?? '';
    const answer = evaluateAnswer({ configMap: 'proxy-mode', key: 'mode', truth: mode, what: 'the proxy mode' }, obs.answer, ctx);
    const facts = [...node.facts, ...answer.facts];
    if (answer.status === 'fail') return { ...answer, facts };
    const where = mode === 'nftables' ? 'one nftables table, `ip kube-proxy`' : 'chains of the iptables `nat` table';
    return pass(`Right: kube-proxy runs in ${mode} mode here, so web's rules live in ${where}.`, facts);
  },
});

/** What "not there yet" looks like when the Service exists but the node has no frontend for it. */
function noFrontend(rules: RulesObservation, key: string, clusterIP: string | undefined): Verdict {
  return fail(
    `The rules on ${rules.node} have no entry for ${key} (${clusterIP ?? 'no ClusterIP'}) yet; kube-proxy writes them within seconds of the Service appearing.`,
    [fact(`ClusterIP frontend of ${key} on ${rules.node}`, `${clusterIP ?? '?'}:80`, 'none', false)],
    true,
  );
}

export const findChainCheck = defineCheck({
  observations: observationsOf({ rules: schemas.rules, answer: schemas.answer }),
  async gather(ctx) {
    const node = await pickNode(ctx, NODE_ROLE);
    const [rules, answer] = await Promise.all([gatherNodeRules(ctx, 'web', node), gatherAnswer(ctx, 'web-chain')]);
    return { rules, answer };
  },
  evaluate(obs, ctx) {
    const found = serviceFrontend(parse, 'web', obs.rules, ctx);
    if (isVerdict(found)) return found;
    const fe = found.frontend;
    if (!fe) return noFrontend(obs.rules, found.key, found.clusterIP);
    const chain = balancingChain(fe) ?? '';
    const path = fact(
      `path from ${fe.ip}:${fe.port} on ${obs.rules.node}`,
      ctx.mode === 'nftables' ? 'services → @service-ips → service-…' : 'KUBE-SERVICES → KUBE-SVC-…',
      fe.path.join(' → '),
      true,
    );
    const answer = evaluateAnswer(
      {
        configMap: 'web-chain',
        key: 'chain',
        truth: chain,
        what: `the chain ${found.key}'s ClusterIP leads to`,
        same: (a, t) => a.trim().replace(/^goto\s+|^-j\s+/, '') === t,
      },
      obs.answer,
      ctx,
    );
    const facts = [path, ...answer.facts];
    if (answer.status === 'fail') return { ...answer, facts };
    const how =
      ctx.mode === 'nftables'
        ? `The \`service-ips\` verdict map sends ${fe.ip} . tcp . ${fe.port} straight to \`${chain}\`: one map lookup, however many Services exist.`
        : `KUBE-SERVICES matches ${fe.ip}:${fe.port} by its comment \`${found.key} cluster IP\` and jumps to \`${chain}\`, one rule among every Service's rules in that chain.`;
    return pass(how, facts);
  },
});

interface SliceEndpoint {
  addresses?: string[];
  conditions?: { ready?: boolean | null };
}

/** Ready `ip:port` pairs of a Service's EndpointSlices (the port the slices name, first one). */
function sliceTargets(slices: KubeList): string[] {
  const out: string[] = [];
  for (const slice of slices.items ?? []) {
    const port = (slice as { ports?: { port?: number }[] }).ports?.[0]?.port;
    for (const ep of (slice as { endpoints?: SliceEndpoint[] }).endpoints ?? []) {
      if (ep.conditions?.ready === false) continue;
      for (const a of ep.addresses ?? []) out.push(`${a}:${port ?? '?'}`);
    }
  }
  return out.sort();
}

function backendFacts(targets: string[], backends: { ip: string; port: number; via?: string; detail?: string }[], node: string): Fact[] {
  const inRules = backends.map((b) => `${b.ip}:${b.port}`).sort();
  return [
    fact('ready endpoints in the EndpointSlices', 'the pods of web', targets, targets.length > 0),
    fact(`DNAT targets in the rules on ${node}`, targets, inRules),
    fact(
      'how each is chosen',
      'one entry per endpoint',
      backends.map((b) => `${b.via ?? '?'} (${b.detail ?? '?'})`),
      backends.length > 0,
    ),
  ];
}

export const followEndpointsCheck = defineCheck({
  observations: observationsOf({ rules: schemas.rules, slices: schemas.kubeList, answer: schemas.answer }),
  async gather(ctx) {
    const node = await pickNode(ctx, NODE_ROLE);
    const [rules, slices, answer] = await Promise.all([
      gatherNodeRules(ctx, 'web', node),
      listBySelector(ctx, 'endpointslices', `${SERVICE_NAME_LABEL}=web`),
      gatherAnswer(ctx, 'web-endpoints'),
    ]);
    return { rules, slices, answer };
  },
  evaluate(obs, ctx: EvalContext) {
    const found = serviceFrontend(parse, 'web', obs.rules, ctx);
    if (isVerdict(found)) return found;
    const fe = found.frontend;
    if (!fe) return noFrontend(obs.rules, found.key, found.clusterIP);
    const targets = sliceTargets(obs.slices);
    const facts = backendFacts(targets, fe.backends, obs.rules.node);
    if (!facts[1].ok)
      return fail(
        `The rules on ${obs.rules.node} and the EndpointSlices of web disagree (${facts[1].seen} versus ${facts[1].expected}); wait a moment while kube-proxy catches up.`,
        facts,
        true,
      );
    const truth = fe.backends
      .map((b) => `${b.ip}:${b.port}`)
      .sort()
      .join(' ');
    const answer = evaluateAnswer(
      { configMap: 'web-endpoints', key: 'endpoints', truth, what: 'the pod addresses the rules DNAT to', same: sameSet },
      obs.answer,
      ctx,
    );
    const all = [...facts, ...answer.facts];
    if (answer.status === 'fail') return { ...answer, facts: all };
    const how =
      ctx.mode === 'nftables'
        ? `\`${fe.chooser} mod ${fe.backends.length}\` picks one endpoint chain`
        : 'the `statistic` rules pick one KUBE-SEP chain';
    return pass(
      `Followed to the end: ${how}, and each ends in a DNAT to one of the ${fe.backends.length} pods the EndpointSlices list.`,
      all,
    );
  },
});
