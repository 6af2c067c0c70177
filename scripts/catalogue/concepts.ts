/**
 * The course's concept ids, one entry per id in the course syllabus (the sections below).
 * Lessons name the ids they teach in their frontmatter (`concepts: [...]`); lab steps name
 * the ids they practise. This list is the only place the ids are written down: tests on
 * both sides check against it, so a typo or a forgotten concept fails the suite.
 */

/** The syllabus sections, keyed by the letter every id in the section starts with. */
export const SECTIONS = {
  S: 'Services and who implements them',
  I: 'iptables mode',
  V: 'IPVS mode',
  N: 'nftables mode',
  E: 'eBPF and Cilium kube-proxy replacement',
  T: 'Traffic paths and Service settings',
  C: 'Comparing and operating',
} as const;

type SectionLetter = keyof typeof SECTIONS;

export interface Concept {
  /** Section letter plus number, for example `I2`. */
  readonly id: string;
  /** A short title, for lists and error messages. */
  readonly title: string;
  /** The section the id belongs to; always the id's first letter. */
  readonly section: SectionLetter;
  /** True where the syllabus marks the concept **lab**: a checked lab step must practise it. */
  readonly lab: boolean;
  /** Set where the syllabus marks the lab as a scale exercise (many Services, slower to run). */
  readonly scale?: true;
}

export const CONCEPTS = [
  { id: 'S1', section: 'S', lab: false, title: 'A Service is a virtual IP and port plus a selector; nothing listens on the ClusterIP' },
  { id: 'S2', section: 'S', lab: true, title: 'EndpointSlices hold the ready pod addresses (up to 100 per slice by default)' },
  { id: 'S3', section: 'S', lab: true, title: 'kube-proxy is a DaemonSet that programs each node; mode at 127.0.0.1:10249/proxyMode' },
  { id: 'S4', section: 'S', lab: false, title: 'Endpoint changes propagate asynchronously; readiness probes and preStop delays' },
  { id: 'S5', section: 'S', lab: false, title: 'The modes: iptables, IPVS, nftables, eBPF replacements; one Service API' },

  { id: 'I1', section: 'I', lab: true, title: 'Chain walk: KUBE-SERVICES → KUBE-SVC-<hash> → KUBE-SEP-<hash> → DNAT' },
  { id: 'I2', section: 'I', lab: true, title: 'Random balancing with -m statistic probabilities 1/n, 1/(n−1), …' },
  { id: 'I3', section: 'I', lab: false, title: 'KUBE-MARK-MASQ marks, KUBE-POSTROUTING masquerades' },
  { id: 'I4', section: 'I', lab: true, scale: true, title: 'Cost grows with Services: linear matching, chain rewrites' },
  { id: 'I5', section: 'I', lab: true, title: 'conntrack: entries per connection, table full drops, conntrack -L/-S/-D' },
  { id: 'I6', section: 'I', lab: true, title: 'Inspecting with iptables-save, counting rules, finding a Service by comment' },

  { id: 'V1', section: 'V', lab: true, title: 'IPVS: kernel L4 balancer with hash lookup; kube-ipvs0; still iptables + ipset' },
  { id: 'V2', section: 'V', lab: true, title: 'Schedulers rr, lc, dh, sh, sed, nq; set with ipvs.scheduler' },
  { id: 'V3', section: 'V', lab: true, title: 'ip_vs modules on the host; ipvsadm -Ln, --stats, -Lnc; /proc/net/ip_vs' },
  { id: 'V4', section: 'V', lab: false, title: 'IPVS mode is deprecated since Kubernetes 1.35' },
  { id: 'V5', section: 'V', lab: false, title: 'Why people moved to IPVS: many Services, CPU, least-connection, slow rewrites' },

  { id: 'N1', section: 'N', lab: true, title: 'Table ip kube-proxy: verdict maps service-ips/service-nodeports, numgen random mod n' },
  { id: 'N2', section: 'N', lab: false, title: 'Beta 1.31, GA 1.33, kernel ≥ 5.13, kind ≥ 0.23; no NodePorts on 127.0.0.1' },
  { id: 'N3', section: 'N', lab: true, title: 'Inspecting with nft list table ip kube-proxy, nft -j, the service-ips element' },

  { id: 'E1', section: 'E', lab: true, title: 'Cilium replaces kube-proxy: tc and socket hooks, backend chosen at connect()' },
  { id: 'E2', section: 'E', lab: true, title: 'Kind without kube-proxy; kubeProxyReplacement=true; cilium-dbg status and service list' },
  { id: 'E3', section: 'E', lab: false, title: 'Load balancing: random or Maglev consistent hashing' },
  { id: 'E4', section: 'E', lab: true, title: 'Hubble flow visibility: hubble observe, --to-service, --verdict DROPPED' },
  { id: 'E5', section: 'E', lab: true, title: 'L7 policy: CiliumNetworkPolicy allowing only GET /api/v1/.* from frontend to api' },

  { id: 'T1', section: 'T', lab: false, title: 'ClusterIP balanced on the client node; NodePort and LoadBalancer bring traffic in' },
  { id: 'T2', section: 'T', lab: false, title: 'externalTrafficPolicy: Cluster: any node, extra hop, SNAT, even balance' },
  { id: 'T3', section: 'T', lab: true, title: 'externalTrafficPolicy: Local: only nodes with a pod answer; client IP kept' },
  { id: 'T4', section: 'T', lab: true, title: 'internalTrafficPolicy: Local for in-cluster traffic' },
  { id: 'T5', section: 'T', lab: true, title: 'sessionAffinity: ClientIP (iptables -m recent, IPVS persistent)' },
  { id: 'T6', section: 'T', lab: false, title: 'Topology-aware routing with trafficDistribution' },
  { id: 'T7', section: 'T', lab: true, title: 'Headless Services: no virtual IP, no rules, DNS returns pod IPs' },

  { id: 'C1', section: 'C', lab: false, title: 'The side-by-side comparison of the modes' },
  { id: 'C2', section: 'C', lab: true, scale: true, title: 'Measured: rule counts and kube-proxy sync time as Services grow' },
  { id: 'C3', section: 'C', lab: false, title: 'Debugging per mode' },
  { id: 'C4', section: 'C', lab: false, title: 'Migrating dataplanes: leftover rules, the CNI guide, one node at a time' },
] as const satisfies readonly Concept[];

export type ConceptId = (typeof CONCEPTS)[number]['id'];

/** The ids as a set, for membership tests on strings that come from frontmatter or lab data. */
const CONCEPT_IDS: ReadonlySet<string> = new Set(CONCEPTS.map((c) => c.id));

export function isConceptId(value: string): value is ConceptId {
  return CONCEPT_IDS.has(value);
}
