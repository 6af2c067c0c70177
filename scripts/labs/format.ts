/** How check results read in a terminal (CLI and harness share it). */
import type { CheckResult } from './engine.ts';

const STATUS_MARK: Record<CheckResult['status'], string> = { pass: '✓', fail: '✗', error: '!' };

export function formatCheckResult(r: CheckResult, opts: { verbose?: boolean } = {}): string {
  const lines = [`${STATUS_MARK[r.status]} ${r.step} — ${r.message}`];
  if (r.facts.length) {
    const w = Math.min(56, Math.max(...r.facts.map((f) => f.label.length)));
    for (const f of r.facts) lines.push(`    ${f.ok ? '✓' : '✗'} ${f.label.padEnd(w)}  expected: ${f.expected}   seen: ${f.seen}`);
  }
  if (r.fix) lines.push(`    Fix: ${r.fix}`);
  if (r.details && opts.verbose) lines.push(...r.details.split('\n').map((l) => `    | ${l}`));
  return lines.join('\n');
}

/** A plain text table with a header row and padded columns. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (c ?? '').padEnd(widths[i]))
      .join(' | ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)].join('\n');
}
