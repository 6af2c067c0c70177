// A trace result in words, for `dplab trace`: each request's path and where it went, then the
// tally beside the shares the rules give. A Cilium trace has no chains: its path is where the
// agent saw the packet (or the socket), and a sentence says where the backend was chosen.
import type { TraceResult, TracedRequest } from '../../wire/trace.ts';

const pct = (x: number) => `${(x * 100).toFixed(0)}%`;

function ending(q: TracedRequest): string {
  const to = q.backend ? `${q.backend.ip}:${q.backend.port}` : '?';
  if (q.outcome === 'dnat' && q.packet.rewriteAt === 'connect') return `chosen at connect(): ${to}`;
  if (q.outcome === 'dnat' && q.packet.rewriteAt === 'packet') return `translated per packet to ${to}`;
  if (q.outcome === 'dnat') return `DNAT to ${to}`;
  if (q.outcome === 'untranslated') return q.packet.steps.some((s) => s.kind === 'event') ? 'not translated' : 'no Service rule matched';
  return `${q.outcome.toUpperCase()}: ${q.packet.steps.at(-1)?.rule ?? ''}`;
}

/** Where the backends were chosen, when an agent's trace says (once for all requests). */
function rewriteSentences(r: TraceResult): string[] {
  const address = r.requests.find((q) => q.frontend)?.frontend?.type === 'ClusterIP' ? 'the ClusterIP' : 'the Service address';
  const at = new Set(r.requests.filter((q) => q.outcome === 'dnat').map((q) => q.packet.rewriteAt));
  const out: string[] = [];
  if (at.has('connect'))
    out.push(
      `chosen at connect(): the packet never carried ${address}; the socket load balancer put the backend's address in the socket before the first packet.`,
    );
  if (at.has('packet'))
    out.push(`translated per packet: the packet left addressed to ${address}, and the datapath rewrote it to the backend's.`);
  return out;
}

export function traceText(r: TraceResult): string {
  const lines = [`${r.node}, ${r.method}: ${r.flow.protocol} ${r.flow.ip}:${r.flow.port}${r.flow.client ? ` from ${r.flow.client}` : ''}`];
  r.requests.forEach((q, i) => {
    const from = `${q.packet.from.ip}:${q.packet.from.port}`;
    lines.push(`  ${i + 1}. ${from} → ${[...q.path, ending(q)].join(' → ')}${q.service ? `   (${q.service})` : ''}`);
  });
  for (const s of rewriteSentences(r)) lines.push(`  ${s}`);
  if (r.tally.length) {
    lines.push('', `  where ${r.requests.length} request${r.requests.length === 1 ? '' : 's'} went, beside the share the rules give:`);
    for (const t of r.tally)
      lines.push(
        `    ${`${t.ip}:${t.port}`.padEnd(21)} ${String(t.count).padStart(3)}   share ${pct(t.share)}${t.via ? `   ${t.via}` : ''}`,
      );
  }
  for (const n of r.notes) lines.push(`  note: ${n}`);
  return `${lines.join('\n')}\n`;
}
