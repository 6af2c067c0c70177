// `nft -a monitor trace` output into trace events. Its lines:
//   trace id 8c86058b ip kube-proxy nat-output packet: oif "up0" ip saddr 172.18.0.3 … tcp dport 80 …
//   trace id 8c86058b ip kube-proxy services rule ip daddr . meta l4proto . th dport vmap @service-ips # handle 12 (verdict goto service-…)
//   trace id 8c86058b ip kube-proxy filter-output policy accept meta mark 0x00004000
// (fixtures/nft-monitor/ holds real captures; README there says how they were made).
import { ParseError } from '../parse-error.ts';
import { parsePort } from '../addr.ts';
import { assemble, eventsOf, type SeenPacket, type TraceEvent } from './events.ts';
import type { PacketTrace } from '../../wire/trace.ts';

const LINE = /^trace id ([0-9a-f]{8}) (ip|ip6|inet|bridge|netdev|arp) (\S+) (\S+) (.*)$/;
const RULE = /^rule (.*?)(?: # handle (\d+))? \(verdict (\w+)(?: (\S+))?\)$/;

export function parseNftMonitor(text: string): PacketTrace[] {
  return assemble(nftEvents(text));
}

function nftEvents(text: string): TraceEvent[] {
  return eventsOf(text, (line, n): TraceEvent => {
    const m = LINE.exec(line);
    if (!m) throw new ParseError('not an nft monitor trace line', n, line);
    const [, id, , table, chain, rest] = m;
    if (rest.startsWith('packet: ')) {
      const packet = packetOf(rest.slice('packet: '.length));
      if (!packet) throw new ParseError('nft trace packet without addresses and ports', n, line);
      return { kind: 'packet', id, packet };
    }
    const r = RULE.exec(rest);
    if (r)
      return {
        kind: 'step',
        id,
        step: { table, chain, kind: 'rule', rule: r[1], handle: r[2] ?? null, verdict: r[3], target: r[4] ?? null },
      };
    const policy = /^policy (\w+)/.exec(rest);
    if (policy)
      return { kind: 'step', id, step: { table, chain, kind: 'policy', rule: null, handle: null, verdict: policy[1], target: null } };
    // A regular chain the packet fell off the end of: "(verdict return)" or "verdict continue".
    const ret = /^\(?verdict (\w+)\)?$/.exec(rest);
    if (ret) return { kind: 'step', id, step: { table, chain, kind: 'return', rule: null, handle: null, verdict: ret[1], target: null } };
    throw new ParseError('nft trace event of an unknown shape', n, line);
  });
}

function packetOf(fields: string): SeenPacket | null {
  const src = /\bip saddr (\S+)/.exec(fields)?.[1];
  const dst = /\bip daddr (\S+)/.exec(fields)?.[1];
  const l4 = /\b(tcp|udp|sctp) sport (\d+) \1 dport (\d+)/.exec(fields);
  if (!src || !dst || !l4) return null;
  const sport = parsePort(l4[2]);
  const dport = parsePort(l4[3]);
  if (sport === null || dport === null) return null;
  return { protocol: l4[1], src, sport, dst, dport };
}
