/**
 * Snippet pieces that read one Service's rules out of `iptables-save -t nat`, scoped to that
 * Service however many others the node holds. They start from the KUBE-SERVICES rule whose
 * comment is "ns/name[:port] cluster IP" (kube-proxy always writes it) and follow its jump, because
 * the per-endpoint comments ("ns/name -> ip:port" on KUBE-SVC rules, "ns/name" on KUBE-SEP rules)
 * are gone once the cluster has more than 1,000 endpoints (kube-proxy's large cluster mode, e.g.
 * with scale-compare's 1,000 Services still there). A grep for "ns/name" then misses them.
 */

/** What to print: the number of endpoint chains, the KUBE-SVC chain with its KUBE-SEP chains, or the KUBE-SEP chains alone. */
export type ServiceRulesView = 'endpoint-count' | 'chains' | 'endpoint-chains';

/** awk: buffer the dump, and find the Service's KUBE-SVC (or, with internalTrafficPolicy Local, KUBE-SVL) chain from its "cluster IP" rule in KUBE-SERVICES. */
const FIND_CHAIN = [
  String.raw`{ l[NR] = $0 }`,
  String.raw`$1 == "-A" && $2 == "KUBE-SERVICES" && (index($0, "\"" svc " cluster IP\"") || index($0, "\"" svc ":")) && index($0, " cluster IP\"")`,
  String.raw`{ for (i = 1; i < NF; i++) if ($i == "-j" && $(i + 1) ~ /^KUBE-SV[CL]-/) chain = $(i + 1) }`,
].join(' ');

/** awk END: mark the KUBE-SEP chains the Service's chain jumps to (sep[name]); n counts them (each once: affinity rules jump to them too). */
const MARK_ENDPOINTS = String.raw`n = 0; for (i = 1; i <= NR; i++) { c = split(l[i], f, " "); if (chain != "" && f[1] == "-A" && f[2] == chain) for (j = 3; j < c; j++) if (f[j] == "-j" && f[j + 1] ~ /^KUBE-SEP-/ && !(f[j + 1] in sep)) { sep[f[j + 1]] = 1; n++ } }`;

const END: Record<ServiceRulesView, string> = {
  'endpoint-count': String.raw`END { ${MARK_ENDPOINTS} print n }`,
  chains: String.raw`END { ${MARK_ENDPOINTS} for (i = 1; i <= NR; i++) { split(l[i], f, " "); if (f[1] == "-A" && chain != "" && (f[2] == chain || (f[2] in sep))) print l[i] } }`,
  'endpoint-chains': String.raw`END { ${MARK_ENDPOINTS} for (i = 1; i <= NR; i++) { split(l[i], f, " "); if (f[1] == "-A" && (f[2] in sep)) print l[i] } }`,
};

/** A pipeline stage to put after `iptables-save -t nat`: `… | ${iptablesServiceRules('lab-x', 'web', 'chains')}`. */
export function iptablesServiceRules(ns: string, service: string, view: ServiceRulesView): string {
  return `awk -v svc='${ns}/${service}' '${FIND_CHAIN} ${END[view]}'`;
}
