/**
 * The kinds of Service frontend the dataplane model tells apart, as the wire names them. Plain
 * data, no zod. Kubernetes' own kinds; Cilium's `HostPort` (a pod's hostPort, which Cilium serves
 * as a service) and `LocalRedirect` (CiliumLocalRedirectPolicy, to a pod on this node); and
 * `unknown`, when the dump alone cannot say (an IPVS virtual server read without the Service range).
 */
export const FRONTEND_TYPES = ['ClusterIP', 'NodePort', 'ExternalIP', 'LoadBalancer', 'HostPort', 'LocalRedirect', 'unknown'] as const;
export type FrontendType = (typeof FRONTEND_TYPES)[number];
