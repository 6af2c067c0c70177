/**
 * How long `dplab help` takes from the shell: the compiled CLI (dist-cli/, what `dplab` and
 * `npm start` run) beside the same sources through tsx (DPLAB_TSX=1, the development path) and
 * `node -e 0` (Node's own start, the limit). Interleaved rounds, medians of wall time.
 * `npx tsx scripts/bench/cli-start.ts [rounds]`. Figures only.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { projectRoot } from '../paths.ts';
import { report } from './report.ts';

const ROUNDS = Number(process.argv[2] ?? 15);
const DPLAB = join(projectRoot, 'scripts', 'dplab.mjs');

const CASES = {
  node: { args: ['-e', '0'], env: {} },
  compiled: { args: [DPLAB, 'help'], env: { DPLAB_TSX: '' } },
  tsx: { args: [DPLAB, 'help'], env: { DPLAB_TSX: '1' } },
} as const;
type Case = keyof typeof CASES;

function once(c: Case): number {
  const started = performance.now();
  const r = spawnSync(process.execPath, CASES[c].args, { env: { ...process.env, ...CASES[c].env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = performance.now() - started;
  if (r.status !== 0) throw new Error(`${c} failed (exit ${r.status}): ${r.stderr}`);
  return ms;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

// One run first: compiles dist-cli/ when a source is newer than it (that run is not counted).
const first = spawnSync(process.execPath, [DPLAB, 'help'], { stdio: ['ignore', 'pipe', 'inherit'] });
if (first.status !== 0) throw new Error('dplab help failed');

const times: Record<Case, number[]> = { node: [], compiled: [], tsx: [] };
for (let i = 0; i < ROUNDS; i++) for (const c of Object.keys(CASES) as Case[]) times[c].push(once(c));
const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)])) as Record<Case, number>;

report('cli-start', [
  {
    measure: `\`dplab help\`, compiled (median of ${ROUNDS})`,
    unit: 'ms',
    ours: m.compiled,
    peer: { name: 'same sources through tsx', value: m.tsx },
    limit: { name: '`node -e 0`', value: m.node },
    goal: { text: '≤ 120 ms (Node ≈ 51 ms)', met: m.compiled <= 120 },
  },
  {
    measure: '`dplab help` over Node’s own start',
    unit: '×',
    ours: m.compiled / m.node,
    limit: { name: '`node -e 0`', value: 1 },
    goal: { text: '≤ 2.35 × (120 / 51 ms)', met: m.compiled / m.node <= 120 / 51 },
  },
]);
