// What to run on a node (or, for Cilium, in the node's cilium agent pod) to get each format,
// and which format each mode's node is read in. The one home of these commands: the explorer's
// live read and the lab checks both take them from here.
import type { Mode } from '../catalogue/modes.ts';
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

/** Where Cilium's own tables are read: the agent container of the cilium pod on the node in question. */
export const CILIUM_AGENT = { namespace: 'kube-system', selector: 'k8s-app=cilium', container: 'cilium-agent' } as const;

export interface RuleDump {
  format: Format;
  /** `node`: run inside the node; `cilium`: inside the node's cilium agent container. */
  where: 'node' | 'cilium';
  command: readonly string[];
}

const dump = (format: Format, where: RuleDump['where']): RuleDump => ({ format, where, command: COMMANDS[format] });

/** What each mode's node shows and in which format (kind nodes ship no ipvsadm, /proc/net/ip_vs is always there). */
export const RULE_DUMPS: Readonly<Record<Mode, RuleDump>> = {
  iptables: dump('iptables-save', 'node'),
  nftables: dump('nft-json', 'node'),
  ipvs: dump('proc-ip-vs', 'node'),
  cilium: dump('cilium-json', 'cilium'),
};
