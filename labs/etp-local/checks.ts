/** etp-local's own check: both web pods sit on one node, and some node has none. */
import { z } from 'zod';
import { defineCheck, fact, fail, listBySelector, pass, podReady } from '../../scripts/labs/checks/index.ts';
import { observationsOf, schemas } from '../../scripts/labs/checks/schemas.ts';

const placementObservationSchema = observationsOf({ nodes: z.array(z.string()), pods: schemas.kubeList });

export const pinnedToOneNode = defineCheck({
  observations: placementObservationSchema,
  async gather(ctx) {
    const [nodes, pods] = await Promise.all([ctx.cluster.nodes({ signal: ctx.signal }), listBySelector(ctx, 'pods', 'app=web')]);
    return { nodes, pods };
  },
  evaluate(obs) {
    const ready = (obs.pods.items ?? []).filter(podReady);
    const hosts = [...new Set(ready.map((p) => String(p.spec?.nodeName ?? '?')))].sort();
    const empty = obs.nodes.filter((n) => !hosts.includes(n));
    const facts = [
      fact(
        'nodes running a ready web pod',
        'exactly 1',
        hosts.length ? hosts.map((h) => `${h} (${ready.filter((p) => p.spec?.nodeName === h).length})`) : 'none',
        hosts.length === 1,
      ),
      fact('nodes without a web pod', 'at least 1', empty, empty.length > 0),
    ];
    if (hosts.length === 0)
      return fail(
        "No web pod is ready on any node yet. Did the node label match the Deployment's nodeSelector?",
        facts,
        (obs.pods.items ?? []).length > 0,
      );
    if (hosts.length > 1)
      return fail(`The web pods run on ${hosts.length} nodes (${hosts.join(', ')}); pin them to one node so another node has none.`, facts);
    return pass(`Both web pods run on ${hosts[0]}; ${empty.join(' and ')} ${empty.length === 1 ? 'has' : 'have'} none.`, facts);
  },
});
