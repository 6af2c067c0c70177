// A trace result in words, for `dplab trace`: each request's path and where it went, then the
// tally beside the shares the rules give.
import type { TraceResult } from '../../wire/trace.ts';

const pct = (x: number) => `${(x * 100).toFixed(0)}%`;

export function traceText(r: TraceResult): string {
  const lines = [`${r.node}, ${r.method}: ${r.flow.protocol} ${r.flow.ip}:${r.flow.port}${r.flow.client ? ` from ${r.flow.client}` : ''}`];
  r.requests.forEach((q, i) => {
    const from = `${q.packet.from.ip}:${q.packet.from.port}`;
    const end =
      q.outcome === 'dnat'
        ? `DNAT to ${q.backend ? `${q.backend.ip}:${q.backend.port}` : '?'}`
        : q.outcome === 'untranslated'
          ? 'no Service rule matched'
          : `${q.outcome.toUpperCase()}: ${q.packet.steps.at(-1)?.rule ?? ''}`;
    lines.push(`  ${i + 1}. ${from} → ${[...q.path, end].join(' → ')}${q.service ? `   (${q.service})` : ''}`);
  });
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
