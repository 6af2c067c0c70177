/** "ConfigMap C has key K": where a lab asks the learner to write down what they found. */
import { z } from 'zod';
import { firstItem, getByName, kubeListSchema } from './kube.ts';
import type { Check } from './types.ts';

export const configMapObservationSchema = z.object({ configmaps: kubeListSchema });
export type ConfigMapObservation = z.infer<typeof configMapObservationSchema>;

export async function gatherConfigMap(ctx: Parameters<Check['gather']>[0], name: string): Promise<ConfigMapObservation> {
  return { configmaps: await getByName(ctx, 'configmaps', name) };
}

/** The value under `key`, or undefined when the ConfigMap or the key is missing. */
export function configMapValue(obs: ConfigMapObservation, key: string): string | undefined {
  const data = firstItem(obs.configmaps)?.data;
  const v = data?.[key];
  return typeof v === 'string' ? v.trim() : undefined;
}
