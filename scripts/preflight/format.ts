/** `dplab doctor`'s table: one line per finding, the fix indented under anything not ok. */
import type { Finding } from './types.ts';

const MARK: Record<Finding['status'], string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' };

export function formatFindings(findings: readonly Finding[]): string {
  const width = Math.max(...findings.map((f) => f.title.length));
  const lines: string[] = [];
  for (const f of findings) {
    lines.push(`${MARK[f.status]}  ${f.title.padEnd(width)}  ${f.detail}`);
    if (f.status !== 'ok' && f.fix) lines.push(`${' '.repeat(width + 8)}Fix: ${f.fix}`);
  }
  const fails = findings.filter((f) => f.status === 'fail').length;
  const warns = findings.filter((f) => f.status === 'warn').length;
  lines.push(
    '',
    fails
      ? `${fails} problem${fails > 1 ? 's' : ''} must be fixed before a lab cluster can start.`
      : warns
        ? 'Ready, with warnings.'
        : 'Ready.',
  );
  return lines.join('\n');
}
