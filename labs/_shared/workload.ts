/**
 * The workload most labs start from, kept once: `web` (3 agnhost netexec pods), its ClusterIP
 * Service and a `client` pod. Lab setups name these files as `@shared/…`.
 */
import type { Mode } from '../../scripts/catalogue/modes.ts';
import { iptablesServiceRules } from './iptables-service.ts';

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

/** The dataplanes whose rules name a Service in text a snippet can count (comments, chain and map names). */
export type RuleMode = 'iptables' | 'nftables';
const isRuleMode = (m: Mode): m is RuleMode => m === 'iptables' || m === 'nftables';

export interface WaitForRulesOptions {
  /** The node whose rules to read, as a shell word. Default: the first worker. */
  node?: string;
  /** The Service (in the lab's namespace) whose rules to wait for. Default: `web`. */
  service?: string;
}

/**
 * A solution line that waits (up to 3 min) until kube-proxy on a node has written a Service's
 * rules for every ready web pod. Ready pods are not yet rules: the EndpointSlice follows the
 * pods, kube-proxy follows the EndpointSlice (at most once per minSyncPeriod, 1 s on kind), and
 * before the Service has a ready endpoint there is no ClusterIP entry at all (iptables: only a
 * REJECT in the filter table; nftables: an element of `no-endpoint-services`). Seen on the real
 * kube-proxy v1.35 of the sim provider: a solution reading the rules (or curling the Service)
 * right after creating it found nothing. The counts follow only this namespace's Service's chains
 * (iptables-service.ts), so other Services' rules (another lab's leftovers, large cluster mode) do
 * not change them. In IPVS and Cilium
 * mode it waits for the `client` pod to get an answer from the Service.
 */
export function waitForWebRules(ns: string, mode: Mode, opts: WaitForRulesOptions = {}): string {
  const node = opts.node ?? '"$DPLAB_CLUSTER-worker"';
  const svc = opts.service ?? 'web';
  const rollout = `kubectl -n ${ns} rollout status deployment/web --timeout=180s`;
  if (!isRuleMode(mode)) {
    // IPVS's table is hex and Cilium's is in BPF maps: wait for the client pod's first answer instead.
    return `${rollout} && for i in $(seq 1 60); do kubectl -n ${ns} exec client -- curl -s --max-time 2 -o /dev/null http://${svc}/hostname && break; sleep 1; done`;
  }
  const ready = `$(kubectl -n ${ns} get deployment web -o jsonpath='{.status.readyReplicas}')`;
  const count =
    mode === 'iptables'
      ? `$(docker exec ${node} iptables-save -t nat | ${iptablesServiceRules(ns, svc, 'endpoint-count')})`
      : `$(docker exec ${node} nft list table ip kube-proxy | grep -o 'goto endpoint-[^ ,}]*-${ns}/${svc}/tcp/[^ ,}]*' | sort -u | wc -l)`;
  return `${rollout} && for i in $(seq 1 180); do [ "${count}" = "${ready}" ] && break; sleep 1; done`;
}
