/**
 * A real kind cluster, as a learner's `dplab up iptables` makes it, beside kind alone with the
 * same config, for each mode named (iptables, nftables and cilium when none is): time to a
 * cluster the labs can use, what a Check and a Reset cost on it (beside deleting the namespace, as
 * Reset used to), and what its three nodes hold in memory. Needs a Docker engine and kind (on these machines:
 * `npm run testenv -- up` and `. ~/.cache/dplab/testenv/env.sh`); `npx tsx
 * test/bench/kind-cluster.ts [modes…] [--ups=N]` takes about five minutes a mode with one start of
 * each side, whose figure moves by ±10 s between runs here: `--ups=3` starts each side three times,
 * taking turns at going first, and reports the medians with every start. Both clusters are named for the
 * benchmark (seat `bench`, and `dplab-bench-bare`), so a learner's own clusters are not touched,
 * and both are deleted at the end. Figures only.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CLUSTER_FOOTPRINT } from '../../scripts/catalogue/modes.ts';
import { projectRoot } from '../../scripts/base/paths.ts';
import { report, type BenchRow } from './lib/report.ts';
import { ciliumInstallCommand } from '../../scripts/clusters/actions.ts';
import { kindOverlay } from '../../scripts/clusters/kind-overlay.ts';
import { kindConfigPath } from '../../scripts/catalogue/modes.ts';

const SEAT = 'bench';
const BARE = 'dplab-bench-bare';
const ALL = ['iptables', 'nftables', 'cilium'] as const;
type BenchMode = (typeof ALL)[number];
const args = process.argv.slice(2);
/** `--ups=N`: N starts of each side per mode (one sample moved by ±10 s between runs on this machine). */
const UPS = Number(/^--ups=(\d+)$/.exec(args.find((a) => a.startsWith('--ups=')) ?? '--ups=1')?.[1] ?? Number.NaN);
if (!Number.isInteger(UPS) || UPS < 1) throw new Error('--ups wants a whole number of starts, at least 1 (--ups=3).');
const named = args.filter((a) => !a.startsWith('--'));
const modes = named.length ? named : [...ALL];
for (const m of modes) if (!(ALL as readonly string[]).includes(m)) throw new Error(`kind-cluster measures ${ALL.join(', ')}; not "${m}".`);
const CHECKS = 15;
const RESETS = 5;

const state = mkdtempSync(join(tmpdir(), 'dplab-bench-kind-'));
const env = { ...process.env, DPLAB_SEAT: SEAT, DPLAB_STATE_DIR: state, NO_COLOR: '1' };

interface Run {
  ms: number;
  status: number | null;
  out: string;
}

function run(file: string, args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Run {
  const t = performance.now();
  const r = spawnSync(file, args, { cwd: projectRoot, env: opts.env ?? env, encoding: 'utf8', timeout: opts.timeoutMs ?? 15 * 60_000 });
  return { ms: performance.now() - t, status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

function must(file: string, args: string[], opts?: { env?: NodeJS.ProcessEnv; timeoutMs?: number }): Run {
  const r = run(file, args, opts);
  if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} failed (exit ${r.status}):\n${r.out.slice(-3000)}`);
  return r;
}

const dplab = (...args: string[]) => ['scripts/dplab.mjs', ...args];

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function timesOf(n: number, once: () => Run, ok: (r: Run) => boolean): number[] {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = once();
    if (!ok(r)) throw new Error(`unexpected result (exit ${r.status}):\n${r.out.slice(-2000)}`);
    ms.push(r.ms);
  }
  return ms.sort((a, b) => a - b);
}

/** The cluster's nodes' memory as `docker stats` reports it, in MiB. */
function nodesMemoryMiB(cluster: string): number {
  const names = must('kind', ['get', 'nodes', '--name', cluster]).out.trim().split('\n').filter(Boolean);
  const stats = must('docker', ['stats', '--no-stream', '--format', '{{.MemUsage}}', ...names])
    .out.trim()
    .split('\n');
  const units: Record<string, number> = { B: 1 / 2 ** 20, KiB: 1 / 1024, MiB: 1, GiB: 1024 };
  return stats.reduce((sum, line) => {
    const m = /^([\d.]+)\s*([KMG]?i?B)/.exec(line.trim());
    if (!m) throw new Error(`docker stats printed "${line}"`);
    return sum + Number(m[1]) * (units[m[2]] ?? Number.NaN);
  }, 0);
}

function daemonSets(kubeconfig: string): string {
  return must('kubectl', [
    '--kubeconfig',
    kubeconfig,
    'get',
    'daemonsets',
    '-A',
    '-o',
    'jsonpath={range .items[*]}{.metadata.name}={.status.numberReady}/{.status.desiredNumberScheduled} {end}',
  ]).out.trim();
}

for (const [tool, fix] of [
  ['docker', 'install Docker (on these machines `npm run testenv -- up`, then `. ~/.cache/dplab/testenv/env.sh`)'],
  ['kind', 'install kind v0.31.0 (the test environment puts one on PATH: `. ~/.cache/dplab/testenv/env.sh`)'],
] as const) {
  if (run(tool, tool === 'docker' ? ['info', '--format', '{{.ServerVersion}}'] : ['version'], { timeoutMs: 20_000 }).status !== 0) {
    // Not measured, said in one line (no stack): `npm run bench` goes on with the others.
    process.stderr.write(`kind-cluster not run: it needs ${tool}; ${fix}.\n`);
    rmSync(state, { recursive: true, force: true });
    process.exit(2);
  }
}

/** Cilium installed on the bare cluster as a person would, and waited for; returns the time taken. */
function installCiliumByHand(kubeconfig: string): number {
  const t = performance.now();
  const installer = run('helm', ['version', '--short'], { timeoutMs: 20_000 }).status === 0 ? 'helm' : 'cilium';
  const c = ciliumInstallCommand(BARE, kubeconfig, installer);
  must(c.file, c.args, { env: { ...env, ...c.env } });
  const kubectl = (...args: string[]) => must('kubectl', ['--kubeconfig', kubeconfig, ...args]);
  kubectl('-n', 'kube-system', 'rollout', 'status', 'daemonset/cilium', '--timeout=5m');
  kubectl('wait', '--for=condition=Ready', 'nodes', '--all', '--timeout=5m');
  kubectl('-n', 'kube-system', 'rollout', 'status', 'deployment/coredns', '--timeout=5m');
  return performance.now() - t;
}

interface UpPair {
  up: Run;
  oursDaemonSets: string;
  bareMs: number;
  bareSettledMs: number;
  bareDaemonSets: string;
  /** Cilium only: kind alone plus Cilium installed and ready by hand. */
  ciliumByHandMs?: number;
}

/** Ours and the bare peer, both started from nothing; `bareFirst` swaps who goes first, so neither always meets a warmer machine. */
function upPair(MODE: BenchMode, bareFirst: boolean): UpPair {
  const OURS = `dplab-${SEAT}-${MODE}`;
  run('kind', ['delete', 'cluster', '--name', BARE]);
  run('node', dplab('down', MODE));

  // The peer: kind alone, from the very config `dplab up` hands it (the test environment's overlaid
  // copy, which `up` writes in the state folder, or the mode's own), waiting for its control plane.
  const bareSide = () => {
    const overlaid = join(state, 'kind', `${OURS}.yaml`);
    if (kindOverlay() && !existsSync(overlaid))
      throw new Error('the first start of a mode must be ours: it writes the overlaid kind config the peer uses.');
    const configPath = existsSync(overlaid) ? overlaid : kindConfigPath(MODE);
    const bareConfig = join(state, 'bare.yaml');
    writeFileSync(bareConfig, readFileSync(configPath, 'utf8'));
    const bareKubeconfig = join(state, 'bare.kubeconfig');
    // Cilium's config has no CNI, so its nodes never get Ready before Cilium is installed: there kind alone is measured without --wait.
    const wait = MODE === 'cilium' ? '0s' : '5m';
    const bare = must('kind', [
      'create',
      'cluster',
      '--name',
      BARE,
      '--config',
      bareConfig,
      '--kubeconfig',
      bareKubeconfig,
      '--wait',
      wait,
    ]);
    const bareDaemonSets = daemonSets(bareKubeconfig);
    const bareReady = performance.now();
    // kind's --wait covers the control plane's Ready condition only; time until every DaemonSet is ready too.
    while (MODE !== 'cilium' && !/^(\S+=(\d+)\/\2\s*)+$/.test(daemonSets(bareKubeconfig)) && performance.now() - bareReady < 5 * 60_000)
      spawnSync('sleep', ['1']);
    const bareSettledMs = bare.ms + (performance.now() - bareReady);
    // Cilium's peer: kind alone plus Cilium's own install and readiness, by hand, with the same
    // installer and values `dplab up` uses: the agents rolled out, every node Ready, CoreDNS up.
    const ciliumByHandMs = MODE === 'cilium' ? bare.ms + installCiliumByHand(bareKubeconfig) : undefined;
    return { bareMs: bare.ms, bareSettledMs, bareDaemonSets, ...(ciliumByHandMs === undefined ? {} : { ciliumByHandMs }) };
  };
  // Ours: everything a learner waits for (cluster, images loaded, kube-proxy and CoreDNS ready).
  const oursSide = () => {
    const up = must('node', dplab('up', MODE));
    return { up, oursDaemonSets: daemonSets(join(state, 'kube', `${OURS}.yaml`)) };
  };
  if (!bareFirst) {
    const ours = oursSide();
    return { ...ours, ...bareSide() };
  }
  const bare = bareSide();
  return { ...oursSide(), ...bare };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const range = (xs: number[]) => (xs.length > 1 ? ` (${xs.map((x) => (x / 1000).toFixed(1)).join(', ')} s)` : '');

function measure(MODE: BenchMode, rows: BenchRow[]): void {
  const OURS = `dplab-${SEAT}-${MODE}`;
  const kubeconfig = join(state, 'kube', `${OURS}.yaml`);
  const pairs = Array.from({ length: UPS }, (_, i) => upPair(MODE, i % 2 === 1));
  const last = pairs[pairs.length - 1];
  const upMs = median(pairs.map((p) => p.up.ms));
  const bareMs = median(pairs.map((p) => p.bareMs));
  const bareSettledMs = median(pairs.map((p) => p.bareSettledMs));
  const byHand = pairs.map((p) => p.ciliumByHandMs).filter((x): x is number => x !== undefined);
  const ciliumByHandMs = byHand.length ? median(byHand) : undefined;
  const of = UPS > 1 ? `, median of ${UPS}` : '';

  rows.push({
    measure: `\`dplab up ${MODE}\` → ready for the labs (3 nodes; DaemonSets: ${last.oursDaemonSets})${of}${range(pairs.map((p) => p.up.ms))}`,
    unit: 's',
    ours: upMs / 1000,
    peer:
      ciliumByHandMs === undefined
        ? { name: `\`kind create --wait\` alone${range(pairs.map((p) => p.bareMs))}`, value: bareMs / 1000 }
        : { name: `\`kind create\`, then Cilium installed and ready by hand${range(byHand)}`, value: ciliumByHandMs / 1000 },
    limit:
      ciliumByHandMs === undefined
        ? { name: '… + its DaemonSets ready', value: bareSettledMs / 1000 }
        : { name: '`kind create` alone (no CNI, no Cilium)', value: bareMs / 1000 },
    goal:
      ciliumByHandMs === undefined
        ? { text: '≤ 1.1 × `kind create --wait`', met: upMs <= 1.1 * bareMs }
        : { text: '≤ 1.1 × kind + Cilium by hand', met: upMs <= 1.1 * ciliumByHandMs },
  });
  console.log(`${MODE}: bare kind cluster's DaemonSets right after kind create: ${last.bareDaemonSets || '(none)'}`);
  // Where `up`'s time went: each step as `dplab up` printed it, with its own time.
  pairs.forEach((p, i) => {
    const steps = p.up.out.split('\n').filter((l) => /^[✓-] /.test(l));
    console.log(
      `${MODE}: \`dplab up\` step by step${UPS > 1 ? ` (start ${i + 1} of ${UPS})` : ''}:\n${steps.map((l) => `  ${l}`).join('\n')}`,
    );
  });

  // The lab set up as a learner's first visit leaves it (its namespace and files), deploy-web not yet done.
  must('node', dplab('reset', 'first-service', '--mode', MODE));

  // A Check on a live cluster: kubectl reads and the verdict, as the lab page's Check button asks for it.
  const check = timesOf(
    CHECKS,
    () => run('node', dplab('check', 'first-service', 'deploy-web', '--mode', MODE)),
    (r) => r.status === 0 || r.status === 1,
  );
  const kubectl = timesOf(
    CHECKS,
    () => run('kubectl', ['--kubeconfig', kubeconfig, 'get', 'deployments,pods', '-n', 'lab-first-service', '-o', 'json']),
    (r) => r.status === 0 || /NotFound|not found/.test(r.out),
  );
  const cliStart = timesOf(
    CHECKS,
    () => run('node', dplab('kubeconfig', MODE)),
    (r) => r.status === 0,
  );
  rows.push(
    {
      measure: `${MODE}: Check (first-service deploy-web), p50 of ${CHECKS}`,
      unit: 'ms',
      ours: quantile(check, 0.5),
      peer: { name: 'one kubectl get', value: quantile(kubectl, 0.5) },
      limit: { name: '`dplab kubeconfig` (the CLI starting)', value: quantile(cliStart, 0.5) },
      goal: { text: '≤ 2 s', met: quantile(check, 0.5) <= 2000 },
    },
    {
      measure: `Check, p95 of ${CHECKS}`,
      unit: 'ms',
      ours: quantile(check, 0.95),
      peer: { name: 'one kubectl get', value: quantile(kubectl, 0.95) },
    },
  );

  // Reset: the lab's namespace emptied in place and set up again, its restore steps run.
  const reset = timesOf(
    RESETS,
    () => {
      must('node', dplab('solve', 'first-service', 'deploy-web', '--mode', MODE));
      return run('node', dplab('reset', 'first-service', '--mode', MODE));
    },
    (r) => r.status === 0,
  );
  // The peer: what Reset used to wait on before doing anything else, deleting the namespace.
  const deleteNamespace = timesOf(
    RESETS,
    () => {
      must('node', dplab('solve', 'first-service', 'deploy-web', '--mode', MODE));
      const r = run('kubectl', ['--kubeconfig', kubeconfig, 'delete', 'namespace', 'lab-first-service', '--wait=true', '--timeout=120s']);
      must('node', dplab('reset', 'first-service', '--mode', MODE));
      return r;
    },
    (r) => r.status === 0,
  );
  rows.push({
    measure: `${MODE}: Reset (first-service, after deploy-web's solution), p50 / max of ${RESETS}`,
    unit: 's',
    ours: quantile(reset, 0.5) / 1000,
    peer: { name: '`kubectl delete namespace --wait` alone, p50', value: quantile(deleteNamespace, 0.5) / 1000 },
    limit: { name: 'max', value: reset[reset.length - 1] / 1000 },
    goal: { text: '≤ 3 s p50', met: quantile(reset, 0.5) <= 3000 },
  });

  const oursMiB = nodesMemoryMiB(OURS);
  const budgetMiB = CLUSTER_FOOTPRINT[MODE].memoryBytes / 2 ** 20;
  rows.push({
    measure: `${MODE}: the cluster's 3 nodes in memory (docker stats)`,
    unit: 'MiB',
    ours: oursMiB,
    peer: { name: MODE === 'cilium' ? 'kind + Cilium by hand' : 'kind alone', value: nodesMemoryMiB(BARE) },
    goal: { text: `≤ ${budgetMiB} MiB (CLUSTER_FOOTPRINT)`, met: oursMiB <= budgetMiB },
  });

  const down = must('node', dplab('down', MODE));
  const bareDown = must('kind', ['delete', 'cluster', '--name', BARE]);
  rows.push({
    measure: `\`dplab down ${MODE}\``,
    unit: 's',
    ours: down.ms / 1000,
    peer: { name: '`kind delete cluster`', value: bareDown.ms / 1000 },
  });
}

const rows: BenchRow[] = [];
try {
  for (const mode of modes) measure(mode as BenchMode, rows);
  report('kind-cluster', rows);
} finally {
  run('kind', ['delete', 'cluster', '--name', BARE]);
  for (const mode of modes) run('node', dplab('down', mode));
  rmSync(state, { recursive: true, force: true });
}
