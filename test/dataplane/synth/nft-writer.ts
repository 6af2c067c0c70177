// Prints kube-proxy's nftables table (`table ip kube-proxy`) in `nft -f` syntax, following the
// objects and rules of kube-proxy's pkg/proxy/nftables/proxier.go (setupNFTables, syncProxyRules,
// writeServiceToEndpointRules). `nft -j list table ip kube-proxy` of the loaded table is the fixture.
// Layout of kube-proxy v1.35.0 (the version we pin). Priorities are numeric (dstnat = -100,
// srcnat = 100, filter = 0): nft 1.0.6 only accepts "dstnat" on prerouting.
import { externalEndpoints, localEndpoints, type SynthCluster, type SynthService } from '../../../scripts/dataplane/synth/cluster.ts';
import { nftNameBase } from './hash-names.ts';

const MASQ_MARK = '0x00004000';

interface Chains {
  lines: string[];
  chain(name: string, body: string[]): void;
}

export function writeNftTable(c: SynthCluster): string {
  const chains: Chains = {
    lines: [],
    chain(name, body) {
      this.lines.push(`\tchain ${name} {`, ...body.map((b) => `\t\t${b}`), '\t}');
    },
  };
  const elems = {
    clusterIPs: [] as string[],
    serviceIPs: [] as string[],
    nodePorts: [] as string[],
    noEpServices: [] as string[],
    noEpNodePorts: [] as string[],
  };
  const affinitySets: string[] = [];

  writeBaseChains(chains, c);
  for (const s of c.services) writeService(c, s, chains, elems, affinitySets);

  const map = (name: string, type: string, comment: string, items: string[]) => [
    `\tmap ${name} {`,
    `\t\ttype ${type} : verdict`,
    `\t\tcomment "${comment}"`,
    ...(items.length ? [`\t\telements = { ${items.join(',\n\t\t\t     ')} }`] : []),
    '\t}',
  ];
  return [
    'table ip kube-proxy {',
    '\tcomment "rules for kube-proxy"',
    '\tset cluster-ips {',
    '\t\ttype ipv4_addr',
    '\t\tcomment "Active ClusterIPs"',
    ...(elems.clusterIPs.length ? [`\t\telements = { ${[...new Set(elems.clusterIPs)].join(', ')} }`] : []),
    '\t}',
    '\tset nodeport-ips {',
    '\t\ttype ipv4_addr',
    '\t\tcomment "IPs that accept NodePort traffic"',
    `\t\telements = { ${c.node.ip} }`,
    '\t}',
    ...affinitySets,
    ...map(
      'no-endpoint-services',
      'ipv4_addr . inet_proto . inet_service',
      'vmap to drop or reject packets to services with no endpoints',
      elems.noEpServices,
    ),
    ...map(
      'no-endpoint-nodeports',
      'inet_proto . inet_service',
      'vmap to drop or reject packets to service nodeports with no endpoints',
      elems.noEpNodePorts,
    ),
    ...map('firewall-ips', 'ipv4_addr . inet_proto . inet_service', 'destinations that are subject to LoadBalancerSourceRanges', []),
    ...map('service-ips', 'ipv4_addr . inet_proto . inet_service', 'ClusterIP, ExternalIP and LoadBalancer IP traffic', elems.serviceIPs),
    ...map('service-nodeports', 'inet_proto . inet_service', 'NodePort traffic', elems.nodePorts),
    ...chains.lines,
    '}',
    '',
  ].join('\n');
}

/**
 * The base chains and helper chains of kube-proxy v1.35.0 (pkg/proxy/nftables/proxier.go
 * setupNFTables; `baseRules` in its proxier_test.go): firewall checks before DNAT at priority
 * dstnat-10, the endpoint and ClusterIP checks at filter priority (0), NodePorts matched on the
 * @nodeport-ips set of node addresses.
 */
function writeBaseChains(chains: Chains, c: SynthCluster): void {
  const base = (name: string, spec: string, rules: string[]) => chains.chain(name, [spec, ...rules]);
  chains.chain('cluster-ips-check', [
    'ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"',
    `ip daddr { ${c.serviceCidr} } drop comment "Drop traffic to unallocated ClusterIPs"`,
  ]);
  base('filter-prerouting-pre-dnat', 'type filter hook prerouting priority -110; policy accept;', ['ct state new jump firewall-check']);
  base('filter-output-pre-dnat', 'type filter hook output priority -110; policy accept;', ['ct state new jump firewall-check']);
  base('filter-forward', 'type filter hook forward priority 0; policy accept;', [
    'ct state new jump service-endpoints-check',
    'ct state new jump cluster-ips-check',
  ]);
  base('filter-input', 'type filter hook input priority 0; policy accept;', [
    'ct state new jump nodeport-endpoints-check',
    'ct state new jump service-endpoints-check',
  ]);
  base('filter-output', 'type filter hook output priority 0; policy accept;', [
    'ct state new jump service-endpoints-check',
    'ct state new jump cluster-ips-check',
  ]);
  chains.chain('firewall-check', ['ip daddr . meta l4proto . th dport vmap @firewall-ips']);
  chains.chain('mark-for-masquerade', [`meta mark set meta mark | ${MASQ_MARK}`]);
  chains.chain('masquerading', [
    `meta mark & ${MASQ_MARK} == 0x00000000 return`,
    `meta mark set meta mark ^ ${MASQ_MARK}`,
    'masquerade fully-random',
  ]);
  base('nat-output', 'type nat hook output priority -100; policy accept;', ['jump services']);
  base('nat-postrouting', 'type nat hook postrouting priority 100; policy accept;', ['jump masquerading']);
  base('nat-prerouting', 'type nat hook prerouting priority -100; policy accept;', ['jump services']);
  chains.chain('nodeport-endpoints-check', ['ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports']);
  chains.chain('reject-chain', ['comment "helper for @no-endpoint-services / @no-endpoint-nodeports"', 'reject']);
  chains.chain('services', [
    'ip daddr . meta l4proto . th dport vmap @service-ips',
    'ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports',
  ]);
  chains.chain('service-endpoints-check', ['ip daddr . meta l4proto . th dport vmap @no-endpoint-services']);
}

function writeService(c: SynthCluster, s: SynthService, chains: Chains, elems: Record<string, string[]>, affinitySets: string[]): void {
  const base = nftNameBase(`${s.namespace}/${s.name}/${s.protocol}/${s.portName}`);
  const svc = `service-${base}`;
  const local = `local-${base}`;
  const ext = `external-${base}`;
  const spn = s.portName ? `${s.namespace}/${s.name}:${s.portName}` : `${s.namespace}/${s.name}`;
  const p = s.protocol;
  elems.clusterIPs.push(s.clusterIP);
  if (s.endpoints.length === 0) {
    elems.noEpServices.push(`${s.clusterIP} . ${p} . ${s.port} comment "${spn}" : goto reject-chain`);
    if (s.nodePort) elems.noEpNodePorts.push(`${p} . ${s.nodePort} comment "${spn}" : goto reject-chain`);
    return;
  }
  const endpointChain = (ip: string) => `endpoint-${nftNameBase(`${s.namespace}/${s.name}/${p}/${s.portName}__${ip}/${s.targetPort}`)}`;
  const affinitySet = (ip: string) => `affinity-${nftNameBase(`${s.namespace}/${s.name}/${p}/${s.portName}__${ip}/${s.targetPort}`)}`;
  elems.serviceIPs.push(`${s.clusterIP} . ${p} . ${s.port} : goto ${svc}`);

  const policyRules = (eps: Array<{ ip: string }>) => [
    ...(s.affinitySeconds ? eps.map((e) => `ip saddr @${affinitySet(e.ip)} goto ${endpointChain(e.ip)}`) : []),
    `numgen random mod ${eps.length} vmap { ${eps.map((e, i) => `${i} : goto ${endpointChain(e.ip)}`).join(', ')} }`,
  ];
  chains.chain(svc, [`ip daddr ${s.clusterIP} ip saddr != ${c.clusterCidr} jump mark-for-masquerade`, ...policyRules(s.endpoints)]);

  if (s.nodePort) {
    elems.nodePorts.push(`${p} . ${s.nodePort} : goto ${ext}`);
    const usable = externalEndpoints(c, s);
    if (s.externalTrafficPolicyLocal) {
      chains.chain(ext, [
        `ip saddr ${c.clusterCidr} goto ${svc} comment "short-circuit pod traffic"`,
        'fib saddr type local jump mark-for-masquerade comment "masquerade local traffic"',
        `fib saddr type local goto ${svc} comment "short-circuit local traffic"`,
        ...(usable.length ? [`goto ${local}`] : []),
      ]);
      if (usable.length) chains.chain(local, policyRules(localEndpoints(c, s)));
      else elems.noEpNodePorts.push(`${p} . ${s.nodePort} comment "${spn}" : drop`);
    } else {
      chains.chain(ext, ['jump mark-for-masquerade', `goto ${svc}`]);
    }
  }
  for (const e of s.endpoints) {
    if (s.affinitySeconds) {
      affinitySets.push(
        `\tset ${affinitySet(e.ip)} {`,
        '\t\ttype ipv4_addr',
        '\t\tflags dynamic,timeout',
        `\t\ttimeout ${s.affinitySeconds}s`,
        '\t}',
      );
    }
    chains.chain(endpointChain(e.ip), [
      `ip saddr ${e.ip} jump mark-for-masquerade`,
      ...(s.affinitySeconds ? [`update @${affinitySet(e.ip)} { ip saddr }`] : []),
      `meta l4proto ${p} dnat to ${e.ip}:${s.targetPort}`,
    ]);
  }
}
