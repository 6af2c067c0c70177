/**
 * The workload most labs start from, kept once: `web` (3 agnhost netexec pods), its ClusterIP
 * Service and a `client` pod. Lab setups name these files as `@shared/…`.
 */

/** agnhost answers /hostname with the pod name and /clientip with the caller's address. */
export const AGNHOST = 'registry.k8s.io/e2e-test-images/agnhost:2.53';

export const WEB_DEPLOYMENT = '@shared/manifests/web-deployment.yaml';
export const WEB_SERVICE = '@shared/manifests/web-service.yaml';
export const CLIENT_POD = '@shared/manifests/client.yaml';

/** web + its Service + the client pod, applied at setup and copied into the learner's workspace. */
export const WEB_AND_CLIENT = {
  manifests: [WEB_DEPLOYMENT, WEB_SERVICE, CLIENT_POD],
  workspace: [WEB_DEPLOYMENT, WEB_SERVICE, CLIENT_POD],
  images: [AGNHOST],
};

/** The same files for the learner to apply: nothing is created at setup. */
export const WEB_AND_CLIENT_TO_APPLY = {
  manifests: [],
  workspace: [WEB_DEPLOYMENT, WEB_SERVICE, CLIENT_POD],
  images: [AGNHOST],
};

/**
 * The node the `client` pod runs on, as a shell expression for snippets. Connection state
 * (IPVS connection entries, the `recent` module's client lists, conntrack) lives on the node
 * where the client's packets enter the dataplane, which is the client's node, not a fixed worker.
 */
export function clientNode(namespace: string): string {
  return `"$(kubectl -n ${namespace} get pod client -o jsonpath='{.spec.nodeName}')"`;
}
