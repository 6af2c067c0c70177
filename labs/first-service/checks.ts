/**
 * The two checks of first-service that combine library pieces in a lab-specific way; the
 * other steps use library checks as they are (see lab.ts).
 */
import { kubeProxyMode } from '../../scripts/catalogue/modes.ts';
import {
  defineCheck,
  evaluateProxyMode,
  fact,
  fail,
  gatherConfigMap,
  gatherProxyMode,
  pass,
  podNotUsable,
  podReady,
  seenProxyMode,
} from '../../scripts/labs/checks/index.ts';
import { observationsOf, schemas } from '../../scripts/labs/checks/schemas.ts';
import { evaluateAnswer } from '../../scripts/labs/checks/answer.ts';
import { clientAndWebObservations, gatherClientAndWeb } from '../_shared/client-and-web.ts';

/** Enough requests that three equally likely pods almost surely do not all look the same. */
const REQUESTS = 8;
const CURL_LOOP = `for i in $(seq 1 ${REQUESTS}); do curl -sS --max-time 2 http://web/hostname; echo; done`;

export const reachWebCheck = defineCheck({
  observations: clientAndWebObservations,
  gather: (ctx) => gatherClientAndWeb(ctx, ['sh', '-c', CURL_LOOP]),
  evaluate(obs, ctx) {
    const notUsable = podNotUsable(
      'client',
      obs.client,
      ctx,
      `Start it with \`kubectl -n ${ctx.namespace} apply -f first-service/client.yaml\`.`,
    );
    if (notUsable) return notUsable;
    const webPods = new Set((obs.web.items ?? []).filter(podReady).map((p) => p.metadata?.name ?? ''));
    const lines = (obs.client.result?.stdout ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    const answered = lines.filter((l) => webPods.has(l));
    const distinct = [...new Set(answered)].sort();
    const facts = [
      fact(`answers to ${REQUESTS} requests from client to http://web/hostname`, REQUESTS, answered.length),
      fact('different web pods that answered', 'at least 2', distinct, distinct.length >= 2),
    ];
    if (answered.length === 0) {
      const err = obs.client.result?.stderr.trim().split('\n')[0];
      return fail(
        `The client pod got no answer from http://web/hostname${err ? ` (${err})` : ''}. Is the Service \`web\` there, with ready endpoints?`,
        facts,
      );
    }
    if (distinct.length < 2) return fail(`Only ${distinct[0]} answered; with three ready pods, several names should show up.`, facts, true);
    return pass(`From the client pod, ${distinct.length} different web pods answered: ${distinct.join(', ')}.`, facts);
  },
});

export const proxyModeCheck = defineCheck({
  observations: observationsOf({ node: schemas.proxyMode, answer: schemas.configMap }),
  async gather(ctx) {
    const [node, answer] = await Promise.all([gatherProxyMode(ctx), gatherConfigMap(ctx, 'proxy-mode')]);
    return { node, answer };
  },
  evaluate(obs, ctx) {
    const node = evaluateProxyMode(obs.node, ctx);
    if (node.status === 'fail') return node;
    const seen = seenProxyMode(obs.node) ?? '';
    const answer = evaluateAnswer({ configMap: 'proxy-mode', key: 'mode', truth: seen, what: "the node's answer" }, obs.answer, ctx);
    const facts = [...node.facts, ...answer.facts];
    if (answer.status === 'fail') return { ...answer, facts };
    const who = kubeProxyMode(ctx.mode) ? `kube-proxy in ${seen} mode` : 'Cilium, with no kube-proxy (KubeProxyReplacement: True)';
    return pass(`Right: Services on this cluster are implemented by ${who}.`, facts);
  },
});
