// `xtables-monitor --trace` (iptables-nft) output into trace events. Its lines:
//   PACKET: 2 6a327bd8 OUT=up0 SRC=172.18.0.3 DST=10.96.45.112 LEN=60 … SPORT=47564 DPORT=80 SYN
//    TRACE: 2 6a327bd8 nat:KUBE-SERVICES:rule:0x46:JUMP:KUBE-SVC-LOLE…  -4 -t nat -A KUBE-SERVICES …
//    TRACE: 2 6a327bd8 raw:OUTPUT:policy:ACCEPT
// (fixtures/xtables-monitor/ holds real captures; README there says how they were made).
import { ParseError } from '../parse-error.ts';
import { parsePort } from '../addr.ts';
import { assemble, eventsOf, type SeenPacket, type TraceEvent } from './events.ts';
import type { PacketTrace } from '../../wire/trace.ts';

const PACKET = /^PACKET: \d+ ([0-9a-f]{8}) (.*)$/;
const TRACE = /^ TRACE: \d+ ([0-9a-f]{8}) ([^:\s]+):([^:\s]+):(rule|policy|return):(.*)$/;
const TCP_FLAGS = new Set(['SYN', 'ACK', 'FIN', 'RST', 'PSH', 'URG']);

export function parseXtablesMonitor(text: string): PacketTrace[] {
  return assemble(xtablesEvents(text));
}

function xtablesEvents(text: string): TraceEvent[] {
  return eventsOf(text, (line, n): TraceEvent => {
    const p = PACKET.exec(line);
    if (p) {
      const packet = packetOf(p[2]);
      if (!packet) throw new ParseError('xtables-monitor packet line without addresses and ports', n, line);
      return { kind: 'packet', id: p[1], packet };
    }
    const t = TRACE.exec(line);
    if (!t) throw new ParseError('not an xtables-monitor --trace line', n, line);
    const [, id, table, chain, kind, rest] = t;
    if (kind !== 'rule') {
      const verdict = rest.trim().toLowerCase() || 'return';
      return {
        kind: 'step',
        id,
        step: { table, chain, kind: kind as 'policy' | 'return', handle: null, verdict, target: null, rule: null },
      };
    }
    // 0x46:JUMP:KUBE-SVC-…  -4 -t nat -A …
    const m = /^(0x[0-9a-f]+):([A-Z]+|0x[0-9a-f]+)(?::(\S+))?(?:\s+-4 -t \S+ (.*))?$/.exec(rest);
    if (!m) throw new ParseError('xtables-monitor rule event of an unknown shape', n, line);
    return {
      kind: 'step',
      id,
      step: { table, chain, kind: 'rule', handle: m[1], verdict: verdictOf(m[2]), target: m[3] ?? null, rule: m[4] ?? null },
    };
  });
}

/** The tool names most verdicts; nftables' own codes it prints as numbers (`-j RETURN` is NFT_RETURN, -5). */
const NFT_CODES: Record<string, string> = {
  '0xffffffff': 'continue',
  '0xfffffffe': 'break',
  '0xfffffffd': 'jump',
  '0xfffffffc': 'goto',
  '0xfffffffb': 'return',
};
const verdictOf = (word: string): string => NFT_CODES[word] ?? word.toLowerCase();

function packetOf(fields: string): SeenPacket | null {
  const kv = new Map<string, string>();
  const words = fields.split(/\s+/);
  for (const w of words) {
    const eq = w.indexOf('=');
    if (eq > 0) kv.set(w.slice(0, eq), w.slice(eq + 1));
  }
  const sport = parsePort(kv.get('SPORT') ?? '');
  const dport = parsePort(kv.get('DPORT') ?? '');
  const src = kv.get('SRC');
  const dst = kv.get('DST');
  if (!src || !dst || sport === null || dport === null) return null;
  // The tool names no protocol for TCP and UDP; TCP shows its flags.
  const protocol = kv.get('PROTO')?.toLowerCase() ?? (words.some((w) => TCP_FLAGS.has(w)) ? 'tcp' : 'udp');
  return { protocol, src, sport, dst, dport };
}
