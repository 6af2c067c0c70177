/** "Service S has spec X": type, ports, selector, traffic policies, affinity, headless. */
import { fact, fail, pass } from './facts.ts';
import { z } from 'zod';
import { serviceSelectorSchema } from '../../clusters/kube-objects.ts';
import { firstItem, getByName, kubeListSchema } from './kube.ts';
import type { Check, EvalContext, Fact } from './types.ts';

interface ServicePortSpec {
  port: number;
  /** A number or a named container port. */
  targetPort?: number | string;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  name?: string;
}

export interface ServiceSpecExpectation {
  type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
  ports?: ServicePortSpec[];
  selector?: Record<string, string>;
  externalTrafficPolicy?: 'Cluster' | 'Local';
  internalTrafficPolicy?: 'Cluster' | 'Local';
  sessionAffinity?: 'None' | 'ClientIP';
  /** `clusterIP: None`. */
  headless?: boolean;
}

export const serviceObservationSchema = z.object({ services: kubeListSchema });
export type ServiceObservation = z.infer<typeof serviceObservationSchema>;

function portText(p: { port?: number; targetPort?: unknown; protocol?: string }): string {
  return `${p.port ?? '?'}→${p.targetPort ?? p.port ?? '?'}/${p.protocol ?? 'TCP'}`;
}

export function evaluateServiceSpec(name: string, want: ServiceSpecExpectation, obs: ServiceObservation, ctx: EvalContext) {
  const svc = firstItem(obs.services);
  if (!svc) {
    return fail(`There is no Service \`${name}\` in namespace \`${ctx.namespace}\` yet.`, [
      fact(`Service ${name}`, 'exists', 'not found', false),
    ]);
  }
  const spec = svc.spec ?? {};
  const facts: Fact[] = [fact(`Service ${name}`, 'exists', 'exists', true)];
  if (want.type) facts.push(fact('type', want.type, spec.type ?? 'ClusterIP'));
  if (want.headless !== undefined)
    facts.push(
      fact(
        'clusterIP',
        want.headless ? 'None' : 'a virtual IP',
        spec.clusterIP,
        want.headless ? spec.clusterIP === 'None' : !!spec.clusterIP && spec.clusterIP !== 'None',
      ),
    );
  if (want.selector) {
    const seen = serviceSelectorSchema.parse(spec.selector ?? {});
    const ok =
      Object.keys(want.selector).length === Object.keys(seen).length && Object.entries(want.selector).every(([k, v]) => seen[k] === v);
    facts.push(fact('selector', want.selector, seen, ok));
  }
  if (want.ports) {
    const seen: ServicePortSpec[] = spec.ports ?? [];
    const ok =
      seen.length === want.ports.length &&
      want.ports.every((w) =>
        seen.some(
          (s) =>
            s.port === w.port &&
            (w.targetPort === undefined || String(s.targetPort ?? s.port) === String(w.targetPort)) &&
            (s.protocol ?? 'TCP') === (w.protocol ?? 'TCP') &&
            (w.name === undefined || s.name === w.name),
        ),
      );
    facts.push(fact('ports', want.ports.map(portText), seen.map(portText), ok));
  }
  for (const key of ['externalTrafficPolicy', 'internalTrafficPolicy', 'sessionAffinity'] as const) {
    if (want[key]) facts.push(fact(key, want[key], spec[key]));
  }
  const wrong = facts.find((f) => !f.ok);
  if (wrong)
    return fail(`Service \`${name}\` exists, but its ${wrong.label} is ${wrong.seen} where the step needs ${wrong.expected}.`, facts);
  return pass(`Service \`${name}\` has the expected spec.`, facts);
}

export function serviceSpec(name: string, want: ServiceSpecExpectation): Check<ServiceObservation> {
  return {
    observations: serviceObservationSchema,
    async gather(ctx) {
      return { services: await getByName(ctx, 'services', name) };
    },
    evaluate: (obs, ctx) => evaluateServiceSpec(name, want, obs, ctx),
  };
}
