/** The check library later labs reuse; one concept per file. */
export type { Check, EvalContext, Fact, GatherContext, Verdict } from './types.ts';
export { allOf, defineCheck } from './compose.ts';
export { fact, fail, pass, show } from './facts.ts';
export { pollUntil, POLL_INTERVAL_MS } from './poll.ts';
export { serviceSpec, evaluateServiceSpec, type ServiceSpecExpectation } from './service.ts';
export { readyEndpoints, evaluateReadyEndpoints, readyAddresses, SERVICE_NAME_LABEL } from './endpoints.ts';
export { deploymentReady, evaluateDeployment } from './deployment.ts';
export {
  gatherPodCommand,
  gatherNodeCommand,
  observeCommand,
  podNotUsable,
  type PodCommandObservation,
  type CommandObservation,
} from './command.ts';
export { gatherConfigMap, configMapValue, evaluateConfigMapValue } from './configmap.ts';
export {
  proxyModeIs,
  gatherProxyMode,
  evaluateProxyMode,
  seenProxyMode,
  expectedProxyMode,
  kubeProxyReplacement,
  type ProxyModeObservation,
} from './proxy-mode.ts';
export { probeNodes, gatherProbes, evaluateProbes, type ProbeExpectation } from './probe.ts';
export { serviceRules, gatherRules, evaluateRules, type ParseRules } from './rules.ts';
export { firstItem, getByName, listBySelector, podReady, selectorString, type KubeList, type KubeObject } from './kube.ts';
