/** "Service S's EndpointSlices hold N ready endpoints" (syllabus S2). */
import { fact, fail, pass } from './facts.ts';
import { z } from 'zod';
import { kubeListSchema, listBySelector } from './kube.ts';
import type { Check, EvalContext } from './types.ts';

/** The label the EndpointSlice controller puts on every slice it manages for a Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export const endpointsObservationSchema = z.object({ slices: kubeListSchema });
export type EndpointsObservation = z.infer<typeof endpointsObservationSchema>;

/** Per the API reference, a missing `ready` condition means ready. */
function readyAddresses(obs: EndpointsObservation): { ready: string[]; notReady: string[]; slices: number } {
  const ready: string[] = [];
  const notReady: string[] = [];
  const items = obs.slices.items ?? [];
  for (const slice of items) {
    for (const ep of slice.endpoints ?? []) {
      const who = `${ep.addresses?.[0] ?? '?'}${ep.targetRef?.name ? ` (${ep.targetRef.name})` : ''}`;
      (ep.conditions?.ready === false ? notReady : ready).push(who);
    }
  }
  return { ready, notReady, slices: items.length };
}

function evaluateReadyEndpoints(service: string, count: number, obs: EndpointsObservation, ctx: EvalContext) {
  const { ready, notReady, slices } = readyAddresses(obs);
  const facts = [fact(`ready endpoints of ${service}`, count, ready.length), fact('EndpointSlices', 'at least 1', slices, slices > 0)];
  if (notReady.length) facts.push(fact('not ready', '(none)', notReady, false));
  if (slices === 0) {
    return fail(
      `No EndpointSlice for Service \`${service}\` in \`${ctx.namespace}\` yet: it exists only once the Service does, and it fills when pods match the selector.`,
      facts,
      true,
    );
  }
  if (ready.length !== count) {
    const why =
      ready.length < count
        ? 'Pods may still be starting, or the selector does not match them.'
        : 'More pods match the selector than the step expects.';
    return fail(
      `Service \`${service}\` has ${ready.length} ready endpoint${ready.length === 1 ? '' : 's'}, the step expects ${count}. ${why}`,
      facts,
      ready.length < count,
    );
  }
  return pass(`The EndpointSlices of \`${service}\` list ${count} ready endpoints: ${ready.join(', ')}.`, facts);
}

export function readyEndpoints(service: string, count: number): Check<EndpointsObservation> {
  return {
    observations: endpointsObservationSchema,
    async gather(ctx) {
      return { slices: await listBySelector(ctx, 'endpointslices', `${SERVICE_NAME_LABEL}=${service}`) };
    },
    evaluate: (obs, ctx) => evaluateReadyEndpoints(service, count, obs, ctx),
  };
}
