/**
 * How long `dplab help` takes from the shell: the compiled CLI (dist-cli/, what `dplab` and
 * `npm start` run) beside the same sources through tsx (DPLAB_TSX=1, the development path) and
 * `node -e 0` (Node's own start, the limit). Interleaved rounds, medians of wall time.
 *
 * When the environment sets NODE_EXTRA_CA_CERTS, Node reads and parses that file before it
 * runs anything (≈ 70 ms for a 144-certificate bundle on the 2-core machine), so `node -e 0`
 * and every Node start pay it alike. The first rows keep the environment as it is (the honest
 * limit is Node in the same environment); two more rows run both without the variable, beside
 * an empty ES module (Node's ES module loader: the floor of any `.mjs` entry such as dplab.mjs).
 * `npx tsx test/bench/cli-start.ts [rounds]`. Figures only.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { projectRoot } from '../../scripts/base/paths.ts';
import { report, type BenchRow } from './lib/report.ts';

const ROUNDS = Number(process.argv[2] ?? 15);
const DPLAB = join(projectRoot, 'scripts', 'dplab.mjs');
const CA = process.env.NODE_EXTRA_CA_CERTS;
const scratch = mkdtempSync(join(tmpdir(), 'dplab-cli-start-'));
const EMPTY_MODULE = join(scratch, 'empty.mjs');
writeFileSync(EMPTY_MODULE, '');

/** `env` is laid over process.env; an undefined value removes the variable. */
const CASES: Record<string, { args: string[]; env: Record<string, string | undefined> }> = {
  node: { args: ['-e', '0'], env: {} },
  compiled: { args: [DPLAB, 'help'], env: { DPLAB_TSX: '' } },
  tsx: { args: [DPLAB, 'help'], env: { DPLAB_TSX: '1' } },
  ...(CA
    ? {
        nodeNoCa: { args: ['-e', '0'], env: { NODE_EXTRA_CA_CERTS: undefined } },
        emptyModuleNoCa: { args: [EMPTY_MODULE], env: { NODE_EXTRA_CA_CERTS: undefined } },
        compiledNoCa: { args: [DPLAB, 'help'], env: { DPLAB_TSX: '', NODE_EXTRA_CA_CERTS: undefined } },
      }
    : {}),
};

function once(c: string): number {
  const env: Record<string, string | undefined> = { ...process.env, ...CASES[c].env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  const started = performance.now();
  const r = spawnSync(process.execPath, CASES[c].args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
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

const times: Record<string, number[]> = Object.fromEntries(Object.keys(CASES).map((c) => [c, []]));
try {
  for (let i = 0; i < ROUNDS; i++) for (const c of Object.keys(CASES)) times[c].push(once(c));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));

/** The goal: 120 ms, and 2.35 × Node's own start (120 / 51 ms, the figures the goal was set from). */
const RATIO = 120 / 51;
function rows(label: string, ours: number, node: number, peer: BenchRow['peer']): BenchRow[] {
  return [
    {
      measure: `\`dplab help\`, compiled${label} (median of ${ROUNDS})`,
      unit: 'ms',
      ours,
      peer,
      limit: { name: '`node -e 0`', value: node },
      goal: { text: '≤ 120 ms', met: ours <= 120 },
    },
    {
      measure: `\`dplab help\` over Node’s own start${label}`,
      unit: '×',
      ours: ours / node,
      limit: { name: '`node -e 0`', value: 1 },
      goal: { text: `≤ ${RATIO.toFixed(2)} × (120 / 51 ms)`, met: ours / node <= RATIO },
    },
  ];
}

report('cli-start', [
  ...rows(CA ? ' (NODE_EXTRA_CA_CERTS set, as here)' : '', m.compiled, m.node, { name: 'same sources through tsx', value: m.tsx }),
  ...(CA ? rows(', NODE_EXTRA_CA_CERTS unset', m.compiledNoCa, m.nodeNoCa, { name: 'an empty ES module', value: m.emptyModuleNoCa }) : []),
]);
