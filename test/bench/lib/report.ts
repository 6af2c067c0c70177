/**
 * One shape for every benchmark's figures, so `dplab bench` can put them in one table.
 * A benchmark calls `report(name, rows)`: the rows are printed as a table on stdout and saved
 * as `.dplab/bench/<name>.json`; `dplab bench` joins every saved file into
 * `.dplab/bench/REPORT.md`, the table a person opens. Figures only: nothing here asserts.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stateDir } from '../../../scripts/base/paths.ts';

export interface BenchRow {
  /** What was measured, e.g. "keystroke → painted frame, p50". */
  measure: string;
  unit: string;
  /** Our figure. */
  ours: number;
  /** The peer's figure in the same run (e.g. wetty), when there is one. */
  peer?: { name: string; value: number };
  /** The limit (what the platform itself does, e.g. raw xterm.js, node-pty alone). */
  limit?: { name: string; value: number };
  /** The goal, as a sentence ("≤ 8 ms and ≤ wetty"), and whether this run met it. */
  goal?: { text: string; met: boolean };
}

export function benchDir(): string {
  return join(stateDir(), 'bench');
}

function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  return Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2);
}

/** The rows as a Markdown table (also readable as plain text). */
function markdownTable(rows: readonly BenchRow[]): string {
  const head = '| measure | ours | peer | limit | goal | met |\n| --- | --- | --- | --- | --- | --- |';
  const lines = rows.map((r) =>
    [
      r.measure,
      `${fmt(r.ours)} ${r.unit}`,
      r.peer ? `${r.peer.name} ${fmt(r.peer.value)} (×${fmt(r.ours / r.peer.value)})` : '—',
      r.limit ? `${r.limit.name} ${fmt(r.limit.value)} (×${fmt(r.ours / r.limit.value)})` : '—',
      r.goal?.text ?? '—',
      r.goal ? (r.goal.met ? 'yes' : 'NO') : '—',
    ].join(' | '),
  );
  return [head, ...lines.map((l) => `| ${l} |`)].join('\n');
}

/** Print the rows and save them for the joined report. */
export function report(bench: string, rows: readonly BenchRow[]): void {
  process.stdout.write(`${markdownTable(rows)}\n`);
  mkdirSync(benchDir(), { recursive: true });
  writeFileSync(join(benchDir(), `${bench}.json`), `${JSON.stringify({ bench, at: new Date().toISOString(), rows }, null, 2)}\n`);
}

/** Join every saved benchmark into REPORT.md; returns its path. */
export function writeJoinedReport(): string {
  const dir = benchDir();
  mkdirSync(dir, { recursive: true });
  const parts = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as { bench: string; at: string; rows: BenchRow[] })
    .map((b) => `## ${b.bench} (${b.at})\n\n${markdownTable(b.rows)}\n`);
  const path = join(dir, 'REPORT.md');
  writeFileSync(path, `# Dataplane Lab benchmarks\n\n${parts.join('\n')}`);
  return path;
}
