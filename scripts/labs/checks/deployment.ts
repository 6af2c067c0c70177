/** "Deployment D has N ready replicas" (optionally of an image, running a given program). */
import { fact, fail, pass } from './facts.ts';
import { z } from 'zod';
import { firstItem, getByName, kubeListSchema } from './kube.ts';
import type { Check, EvalContext, Fact } from './types.ts';

export interface DeploymentExpectation {
  replicas: number;
  image?: string;
  /** A word that must appear in the first container's command or args (e.g. `netexec`). */
  runs?: string;
}

export const deploymentObservationSchema = z.object({ deployments: kubeListSchema });
export type DeploymentObservation = z.infer<typeof deploymentObservationSchema>;

export function evaluateDeployment(name: string, want: DeploymentExpectation, obs: DeploymentObservation, ctx: EvalContext) {
  const d = firstItem(obs.deployments);
  if (!d)
    return fail(`There is no Deployment \`${name}\` in namespace \`${ctx.namespace}\` yet.`, [
      fact(`Deployment ${name}`, 'exists', 'not found', false),
    ]);
  const container = d.spec?.template?.spec?.containers?.[0] ?? {};
  const argv: string[] = [...(container.command ?? []), ...(container.args ?? [])];
  const ready: number = d.status?.readyReplicas ?? 0;
  const facts: Fact[] = [fact(`Deployment ${name}`, 'exists', 'exists', true)];
  if (want.image) facts.push(fact('image', want.image, container.image));
  if (want.runs)
    facts.push(
      fact(
        'runs',
        want.runs,
        argv.join(' '),
        argv.some((a) => a === want.runs || a.endsWith(`/${want.runs}`)),
      ),
    );
  facts.push(fact('replicas (spec)', want.replicas, d.spec?.replicas ?? 1));
  const wrong = facts.find((f) => !f.ok);
  if (wrong)
    return fail(`Deployment \`${name}\` exists, but its ${wrong.label} is ${wrong.seen} where the step needs ${wrong.expected}.`, [
      ...facts,
      fact('ready replicas', want.replicas, ready),
    ]);
  facts.push(fact('ready replicas', want.replicas, ready));
  if (ready < want.replicas) {
    return fail(
      `Deployment \`${name}\` has ${ready} of ${want.replicas} replicas ready. Pods may still be pulling the image: watch \`kubectl -n ${ctx.namespace} get pods\`.`,
      facts,
      true,
    );
  }
  return pass(`Deployment \`${name}\` runs ${want.replicas} ready replicas.`, facts);
}

export function deploymentReady(name: string, want: DeploymentExpectation): Check<DeploymentObservation> {
  return {
    observations: deploymentObservationSchema,
    async gather(ctx) {
      return { deployments: await getByName(ctx, 'deployments', name) };
    },
    evaluate: (obs, ctx) => evaluateDeployment(name, want, obs, ctx),
  };
}
