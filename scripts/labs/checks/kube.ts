/**
 * Reads through kubectl that a missing object does not turn into an error: a list filtered by
 * name is empty when the learner has not created the object yet, which is a fail, not an error.
 * (We never parse kubectl's error text to tell "not found" apart.)
 */
import type { GatherContext } from './types.ts';

import { kubeListSchema, type KubeList, type KubeObject } from '../../clusters/kube-objects.ts';

export { kubeListSchema, type KubeList, type KubeObject } from '../../clusters/kube-objects.ts';

/** `kubectl get <resource> -n <ns> --field-selector metadata.name=<name> -o json` */
export async function getByName(ctx: GatherContext, resource: string, name: string, namespace = ctx.namespace): Promise<KubeList> {
  return ctx.cluster.kubectlJson(['get', resource, '-n', namespace, '--field-selector', `metadata.name=${name}`], kubeListSchema, {
    signal: ctx.signal,
  });
}

/** `kubectl get <resource> -n <ns> -l <selector> -o json` */
export async function listBySelector(ctx: GatherContext, resource: string, selector: string, namespace = ctx.namespace): Promise<KubeList> {
  return ctx.cluster.kubectlJson(['get', resource, '-n', namespace, '-l', selector], kubeListSchema, { signal: ctx.signal });
}

export function firstItem(list: KubeList | undefined): KubeObject | undefined {
  return Array.isArray(list?.items) ? list.items[0] : undefined;
}

/** A pod's Ready condition, as kubectl shows it in status.conditions. */
export function podReady(pod: KubeObject): boolean {
  const conditions: { type?: string; status?: string }[] = pod.status?.conditions ?? [];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** `app=web` from `{ app: 'web' }`, for kubectl -l. */
export function selectorString(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}
