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

/**
 * A solution line that waits (up to 3 min) until kube-proxy on the worker has written web's
 * rules for every ready pod. Ready pods are not yet rules: the EndpointSlice follows the pods,
 * kube-proxy follows the EndpointSlice (at most once per minSyncPeriod, 1 s on kind), and
 * before web has a ready endpoint there is no ClusterIP entry at all (iptables: only a REJECT
 * in the filter table; nftables: an element of `no-endpoint-services`). Seen on the real
 * kube-proxy v1.35 of the sim provider: a solution reading the rules right after setup found nothing.
 */
export function waitForWebRules(ns: string, mode: 'iptables' | 'nftables', node = '"$DPLAB_CLUSTER-worker"'): string {
  const ready = `$(kubectl -n ${ns} get deployment web -o jsonpath='{.status.readyReplicas}')`;
  const count =
    mode === 'iptables'
      ? `$(docker exec ${node} iptables-save -t nat | grep -c '^-A KUBE-SVC-.*"${ns}/web -> ')`
      : `$(docker exec ${node} nft list table ip kube-proxy | grep -o 'goto endpoint-[^ ,}]*-${ns}/web/tcp/[^ ,}]*' | sort -u | wc -l)`;
  return `kubectl -n ${ns} rollout status deployment/web --timeout=180s && for i in $(seq 1 180); do [ "${count}" = "${ready}" ] && break; sleep 1; done`;
}
