/** The check library later labs reuse; one concept per file. */
export type { EvalContext, Fact, Verdict } from './types.ts';
export { allOf, defineCheck } from './compose.ts';
export { fact, fail, pass } from './facts.ts';
export { serviceSpec, evaluateServiceSpec } from './service.ts';
export { readyEndpoints, SERVICE_NAME_LABEL } from './endpoints.ts';
export { deploymentReady, evaluateDeployment } from './deployment.ts';
export { gatherPodCommand, gatherNodeCommand, podNotUsable, type PodCommandObservation } from './command.ts';
export { gatherConfigMap } from './configmap.ts';
export { gatherProxyMode, evaluateProxyMode, seenProxyMode, kubeProxyReplacement, socketLB } from './proxy-mode.ts';
export { serviceRules } from './rules.ts';
export { firstItem, getByName, listBySelector, podReady, type KubeList } from './kube.ts';
