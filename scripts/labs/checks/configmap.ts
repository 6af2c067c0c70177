/** "ConfigMap C has key K": where a lab asks the learner to write down what they found. */
import { fact, fail, pass } from './facts.ts';
import { z } from 'zod';
import { firstItem, getByName, kubeListSchema } from './kube.ts';
import type { Check, EvalContext } from './types.ts';

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

/** Pass when the key holds what `expected` says, given the observations. */
export function evaluateConfigMapValue(name: string, key: string, expected: string, obs: ConfigMapObservation, ctx: EvalContext) {
  const cm = firstItem(obs.configmaps);
  if (!cm)
    return fail(`There is no ConfigMap \`${name}\` in namespace \`${ctx.namespace}\` yet.`, [
      fact(`ConfigMap ${name}`, `${key}=${expected}`, 'not found', false),
    ]);
  const seen = configMapValue(obs, key);
  const f = fact(`ConfigMap ${name}, key ${key}`, expected, seen);
  return f.ok
    ? pass(`ConfigMap \`${name}\` records ${key}=${expected}.`, [f])
    : fail(`ConfigMap \`${name}\` records ${key}=${f.seen}, but ${expected} is what the cluster shows.`, [f]);
}
