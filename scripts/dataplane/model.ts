// The one normalised shape every dataplane parser produces, whatever tool printed the input.
// Lessons, checks and `dplab explain` read this, never the raw tool output.

import type { Format } from '../wire/formats.ts';
import type { FrontendType } from '../wire/frontend-types.ts';

export { FORMATS, type Format } from '../wire/formats.ts';
/** Which kind of frontend: Kubernetes' own, Cilium's HostPort and LocalRedirect, or `unknown` (scripts/wire/frontend-types.ts). */
export { type FrontendType } from '../wire/frontend-types.ts';

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

/** NodePorts answer on every local address; the rules name no IP, so the model uses this one. */
export const ANY_NODE_IP = '0.0.0.0';

export interface Backend {
  ip: string;
  port: number;
  /** Probability that a new connection to this frontend lands here (0..1). */
  share: number;
  /** Where the dataplane keeps this choice (KUBE-SEP chain, endpoint chain, "Masq w=1"…), for diagrams. */
  via?: string;
  /** The raw figure behind the share as the tool shows it (probability, weight, numgen slot). */
  detail?: string;
}

export interface Affinity {
  timeoutSeconds: number;
}

/**
 * One rule of a Service's external chain (kube-proxy's `KUBE-EXT-<hash>` / `external-<hash>-…`)
 * besides its last jump to the policy chain, which is the next hop of `path`. With
 * `externalTrafficPolicy: Cluster` it is the mark that has every packet masqueraded; with `Local`,
 * the rules that send a pod's and the node's own traffic to the Cluster chain instead (and mark
 * the node's own for masquerading), so only outside clients are held to the local endpoints.
 */
export interface ExternalRule {
  /** Which packets: all of them, those from a pod (the cluster's pod range), those the node sends itself. */
  traffic: 'all' | 'pods' | 'node';
  /** `masquerade`: mark for SNAT and go on to the next rule; `jump`: leave for `target`. */
  action: 'masquerade' | 'jump';
  /** The chain it jumps to: KUBE-MARK-MASQ / mark-for-masquerade, or the Service's Cluster chain. */
  target: string;
  /** The match as the tool prints it (`-s 10.244.0.0/16`, `--src-type LOCAL`, `fib saddr type local`), empty for none. */
  match: string;
  /** kube-proxy's comment on the rule, when it wrote one. */
  comment: string | null;
}

export interface ExternalChain {
  /** The chain's name (a hop of the frontend's `path`). */
  chain: string;
  /** Its rules in order, without the last jump to the policy chain. */
  rules: ExternalRule[];
}

export interface Frontend {
  type: FrontendType;
  ip: string;
  port: number;
  protocol: Protocol;
  backends: Backend[];
  /** externalTrafficPolicy (external frontends) or internalTrafficPolicy (ClusterIP) is Local. */
  localOnly: boolean;
  /** Local policy and no endpoint on this node: outside traffic to this frontend is dropped here. */
  dropsWithoutLocalEndpoints: boolean;
  affinity: Affinity | null;
  /** What happens when there is no backend at all: kube-proxy rejects, Local policy drops. */
  noBackendVerdict: 'reject' | 'drop' | null;
  /** Chains / maps / tables walked before the backend choice, in order, for diagrams. */
  path: string[];
  /** How the backend is chosen, in the tool's words ("statistic random", "numgen random mod 3", "rr"). */
  chooser: string;
  /** loadBalancerSourceRanges: only these sources get through (kube-proxy's firewall chain); absent when unrestricted. */
  sourceRanges?: string[];
  /** The external chain on the path (NodePorts, external and load-balancer IPs under kube-proxy), for diagrams; absent without one. */
  external?: ExternalChain;
  /** Cilium: the backends (`ip:port`, sorted) of the internal-scope twin ("/i") folded into this frontend; absent without one. */
  internalTwinBackends?: string[];
}

/** One port of one Service (or one unnamed virtual server when the tool does not name Services). */
export interface ServicePort {
  service: string | null;
  portName: string | null;
  frontends: Frontend[];
}

export interface DataplaneModel {
  format: Format;
  services: ServicePort[];
  /** The headline count the UI shows (rules, rules + map elements, virtual servers, frontends). */
  entries: number;
  entriesLabel: string;
  /** Finer counts (chains, rules, elements, backends…), by name. */
  counts: Record<string, number>;
  /**
   * What the parser could not tell or skipped, in words for the learner: lines it did not
   * understand (kept out of the model, never hiding the rest), guesses it had to make.
   */
  notes?: string[];
}

/** What findService / findFrontend return and toJson prints: one Service's frontends across its ports. */
export interface ServiceView {
  service: string | null;
  frontends: Array<Frontend & { portName: string | null }>;
}

export interface ParseOptions {
  /** ipvsadm and /proc/net/ip_vs do not name Services: "10.96.45.112:80" (or "TCP/10.96.45.112:80") → "default/web[:port]". */
  names?: Record<string, string>;
  /** Kernel HZ, to turn /proc/net/ip_vs persistence (jiffies) into seconds. */
  hz?: number;
  /** Service CIDR(s), to tell ClusterIP virtual servers from node addresses in IPVS output. */
  serviceCidr?: string | string[];
  /** The cluster's ClusterIPs (live reads know them): a virtual server on one of them is a ClusterIP. */
  clusterIPs?: string[];
}

/** Tolerance when checking that shares sum to 1. */
export const SHARE_EPSILON = 1e-9;
