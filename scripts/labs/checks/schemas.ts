/**
 * Every building block's observation schema under one name, for labs that compose their own
 * checks: `defineCheck({ observations: observationsOf({ rules: schemas.rules, answer: schemas.answer }), … })`.
 */
import { clientIpObservationSchema } from './client-ip.ts';
import { commandObservationSchema, podCommandObservationSchema } from './command.ts';
import { configMapObservationSchema } from './configmap.ts';
import { connectObservationSchema } from './connect-cost.ts';
import { conntrackObservationSchema } from './conntrack.ts';
import { deploymentObservationSchema } from './deployment.ts';
import { endpointsObservationSchema } from './endpoints.ts';
import { hubbleObservationSchema } from './hubble.ts';
import { kubeListSchema } from './kube.ts';
import { probeObservationSchema } from './probe.ts';
import { proxyModeObservationSchema } from './proxy-mode.ts';
import { rulesObservationSchema } from './rules.ts';
import { scaleObservationSchema } from './scale.ts';
import { serviceObservationSchema } from './service.ts';

export { observationsOf } from './compose.ts';

export const schemas = {
  clientIp: clientIpObservationSchema,
  command: commandObservationSchema,
  podCommand: podCommandObservationSchema,
  configMap: configMapObservationSchema,
  /** connect-cost.sh's timed connections from a node (connect-cost.ts). */
  connect: connectObservationSchema,
  /** An answer the learner recorded is a ConfigMap read (answer.ts). */
  answer: configMapObservationSchema,
  conntrack: conntrackObservationSchema,
  deployment: deploymentObservationSchema,
  endpoints: endpointsObservationSchema,
  hubble: hubbleObservationSchema,
  kubeList: kubeListSchema,
  probe: probeObservationSchema,
  proxyMode: proxyModeObservationSchema,
  rules: rulesObservationSchema,
  scale: scaleObservationSchema,
  service: serviceObservationSchema,
} as const;
