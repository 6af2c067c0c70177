// What to run on a node (or, for Cilium, in the node's cilium agent pod) to get each format.
import type { Format } from './model.ts';

const COMMANDS: Record<Format, readonly string[]> = {
  // All tables, not just nat: the filter table holds the "has no endpoints" REJECT/DROP rules.
  'iptables-save': ['iptables-save'],
  'nft-json': ['nft', '-j', 'list', 'table', 'ip', 'kube-proxy'],
  // kind nodes do not ship ipvsadm; the proc file needs nothing installed.
  ipvsadm: ['ipvsadm', '-Ln'],
  'proc-ip-vs': ['cat', '/proc/net/ip_vs'],
  cilium: ['cilium-dbg', 'service', 'list'],
  'cilium-json': ['cilium-dbg', 'service', 'list', '-o', 'json'],
};

export function commandsToRead(format: Format): string[] {
  return [...COMMANDS[format]];
}
