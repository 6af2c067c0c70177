// What both trace monitors report, as one stream: a packet as a base chain saw it, or one step
// of its walk (a rule that matched, a policy, a return). assemble() turns the stream into one
// PacketTrace per new connection; the two parsers only turn their tool's lines into events.
import type { PacketTrace, TraceStep } from '../../wire/trace.ts';

export interface SeenPacket {
  protocol: string;
  src: string;
  sport: number;
  dst: string;
  dport: number;
}

export type TraceEvent = { kind: 'packet'; id: string; packet: SeenPacket } | { kind: 'step'; id: string; step: TraceStep };

/** Each non-empty line (trailing blanks cut) read by `read` with its 1-based number; what it returns, in order. */
export function eventsOf(text: string, read: (line: string, lineNo: number) => TraceEvent): TraceEvent[] {
  const events: TraceEvent[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\s+$/, '');
    if (line !== '') events.push(read(line, i + 1));
  });
  return events;
}

/** A verdict that ends the packet's walk through the rules. */
const FINAL = new Set(['accept', 'drop']);

/** The rule text says REJECT (`-j REJECT`, nft `reject`): the kernel's verdict is drop, the learner's word is reject. */
export const isReject = (step: TraceStep): boolean => step.verdict === 'drop' && /(^|\s)(-j REJECT|reject)(\s|$)/.test(step.rule ?? '');

/**
 * Group events by connection (protocol, source address and port: the trace rules match only the
 * first packet of a connection, and the kernel's trace id is per packet buffer, reused). A packet
 * addressed to its original destination again after a rewrite is a retransmission, which conntrack
 * translates without walking nat: its steps are left out.
 */
export function assemble(events: readonly TraceEvent[]): PacketTrace[] {
  const byFlow = new Map<string, PacketTrace>();
  const current = new Map<string, PacketTrace | null>();
  for (const ev of events) {
    if (ev.kind === 'packet') {
      const p = ev.packet;
      const key = `${p.protocol}/${p.src}:${p.sport}`;
      let trace = byFlow.get(key);
      if (!trace) {
        trace = {
          id: ev.id,
          protocol: p.protocol,
          from: { ip: p.src, port: p.sport },
          to: { ip: p.dst, port: p.dport },
          rewrittenTo: null,
          steps: [],
          verdict: 'accept',
        };
        byFlow.set(key, trace);
      } else if (trace.rewrittenTo && p.dst === trace.to.ip && p.dport === trace.to.port) {
        current.set(ev.id, null);
        continue;
      } else if (p.dst !== trace.to.ip || p.dport !== trace.to.port) {
        trace.rewrittenTo = { ip: p.dst, port: p.dport };
      }
      current.set(ev.id, trace);
      continue;
    }
    const trace = current.get(ev.id);
    if (!trace) continue;
    trace.steps.push(ev.step);
    if (FINAL.has(ev.step.verdict)) trace.verdict = isReject(ev.step) ? 'reject' : ev.step.verdict;
  }
  return [...byFlow.values()];
}
