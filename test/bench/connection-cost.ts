/**
 * The cost of a new connection against the number of Services, recorded on real kind clusters:
 * per mode named (iptables, nftables and cilium when none is) a cluster as `dplab up` makes it,
 * scale-compare set up on it, then 0 → 1,000 → 5,000 → 10,000 generated Services; at each size
 * it waits until the node's dataplane holds still, counts it (count.sh) and times new TCP
 * connections from the first worker with the lab's own connect-cost.sh (on iptables to the Service
 * whose KUBE-SERVICES rule comes last, and to the first as the control). The figures go to
 * labs/scale-compare/recorded/connection-cost.json (committed; the lab page and the comparing
 * lesson chart them) after every point, so a run cut short keeps what it measured, and are
 * printed side by side: each point beside the same mode at 0 Services (its floor) and beside
 * nftables at the same size (a hash lookup). At 1,000 Services, where scale-compare's connection
 * step starts, it also runs that step's contract and records its observations, as verify-labs would.
 *
 *   . ~/.cache/dplab/testenv/env.sh
 *   flock /work/kind.lock npx tsx test/bench/connection-cost.ts iptables [--sizes 0,1000] [--samples 400]
 *
 * Clusters are named for the benchmark (seat `conncost`), so a learner's own are not touched, and
 * each is deleted when its mode is done; `--seat none` uses (or makes) the learner's `dplab-<mode>`
 * instead, e.g. the cluster `dplab verify-labs --record` just used, and `--keep` leaves it up. IPVS needs the QEMU guest (ip_vs): its entry stays "not
 * recorded yet". Figures only.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CILIUM_VERSION, KIND_VERSION, KUBERNETES_VERSION } from '../../scripts/base/versions.ts';
import { labsDir, projectRoot, stateDir } from '../../scripts/base/paths.ts';
import { ENTRY_COUNTS } from '../../scripts/labs/checks/scale.ts';
import { onNodeArgs, parseConnectRun, summarise, type ConnectRun } from '../../scripts/labs/checks/connect-cost.ts';
import { connectionCostSchema, type ConnectionCost, type ConnectionPoint } from '../../scripts/wire/connection-cost.ts';
import { MODES, type Mode } from '../../scripts/wire/modes.ts';
import { report, type BenchRow } from './lib/report.ts';
import { verifyStepInPlace } from '../../scripts/labs/harness.ts';
import { requireLab } from '../../scripts/labs/registry.ts';

const RECORDING = join(labsDir, 'scale-compare', 'recorded', 'connection-cost.json');
const SEAT = 'conncost';
const NS = 'lab-scale-compare';
const KIND_MODES = ['iptables', 'nftables', 'cilium'] as const;
const IPVS_NOTE =
  'Not recorded yet: IPVS needs a kernel with ip_vs, which this machine lacks; it runs in the test environment’s QEMU guest (`npm run test:ipvs`), where kind’s own nodes did not settle.';

const manifests = join(labsDir, 'scale-compare', 'manifests');

/** The run's settings, from the command line: modes, then `--sizes a,b,…`, `--samples N`, `--warm-up N`, `--seat S`, `--keep`. */
interface Settings {
  modes: Mode[];
  sizes: number[];
  samples: number;
  warmUp: number;
  /** The clusters' seat (`dplab-<seat>-<mode>`, in a state folder of their own); null: a learner's `dplab-<mode>` and state folder. */
  seat: string | null;
  /** Leave the cluster up at the end. */
  keep: boolean;
}

function settings(argv: string[]): Settings {
  const args = [...argv];
  const option = (name: string, fallback: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args.splice(i, 2)[1] : fallback;
  };
  const sizes = option('--sizes', '0,1000,5000,10000').split(',').map(Number);
  const samples = Number(option('--samples', '400'));
  const warmUp = Number(option('--warm-up', '50'));
  const seatArg = option('--seat', SEAT);
  const keepAt = args.indexOf('--keep');
  if (keepAt >= 0) args.splice(keepAt, 1);
  const modes = args.length ? args : [...KIND_MODES];
  for (const m of modes)
    if (!(KIND_MODES as readonly string[]).includes(m))
      throw new Error(`connection-cost records ${KIND_MODES.join(', ')} on kind; not "${m}".`);
  return { modes: modes as Mode[], sizes, samples, warmUp, seat: seatArg === 'none' ? null : seatArg, keep: keepAt >= 0 };
}

let seat: string | null = SEAT;
let benchState: string | undefined;
/** The state folder: the benchmark's own for a seat, the learner's (`.dplab`, or DPLAB_STATE_DIR) without. */
const state = () => {
  if (seat === null) return stateDir();
  benchState ??= mkdtempSync(join(tmpdir(), 'dplab-bench-conncost-'));
  return benchState;
};
const benchEnv = () => ({ ...process.env, ...(seat === null ? {} : { DPLAB_SEAT: seat, DPLAB_STATE_DIR: state() }), NO_COLOR: '1' });

interface Run {
  status: number | null;
  out: string;
  stdout: string;
}

function run(file: string, argv: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Run {
  const r = spawnSync(file, argv, {
    cwd: projectRoot,
    env: opts.env ?? benchEnv(),
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 15 * 60_000,
    maxBuffer: 64 * 2 ** 20,
  });
  return { status: r.status, stdout: r.stdout ?? '', out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

function must(file: string, argv: string[], opts?: { env?: NodeJS.ProcessEnv; timeoutMs?: number }): Run {
  const r = run(file, argv, opts);
  if (r.status !== 0) throw new Error(`${file} ${argv.join(' ').slice(0, 200)} failed (exit ${r.status}):\n${r.out.slice(-3000)}`);
  return r;
}

const log = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const sleep = (ms: number) => spawnSync('sleep', [String(ms / 1000)]);
const dplab = (...a: string[]) => must('node', ['scripts/dplab.mjs', ...a], { timeoutMs: 30 * 60_000 });

function machine(): string {
  const model = cpus()[0]?.model.replace(/\s+/g, ' ').trim() ?? 'unknown CPU';
  return `${cpus().length} cores (${model}), ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}, shared with other work`;
}

function load(): ConnectionCost | null {
  if (!existsSync(RECORDING)) return null;
  return connectionCostSchema.parse(JSON.parse(readFileSync(RECORDING, 'utf8')));
}

/** The file with `mode`'s entry replaced (a not-recorded IPVS entry stays until someone records it). */
function save(entry: ConnectionCost['modes'][number], kubernetes: string, chosen: Settings): void {
  const before = load();
  const others = (before?.modes ?? []).filter((m) => m.mode !== entry.mode);
  const all = [...others, entry];
  if (!all.some((m) => m.mode === 'ipvs')) all.push({ mode: 'ipvs', recorded: false, note: IPVS_NOTE });
  const next: ConnectionCost = {
    date: new Date().toISOString(),
    machine: machine(),
    versions: { kind: `v${KIND_VERSION}`, kubernetes, cilium: CILIUM_VERSION },
    samples: chosen.samples,
    warmUp: chosen.warmUp,
    modes: all.sort((a, b) => MODES.indexOf(a.mode) - MODES.indexOf(b.mode)),
  };
  connectionCostSchema.parse(next);
  mkdirSync(dirname(RECORDING), { recursive: true });
  writeFileSync(RECORDING, `${JSON.stringify(next, null, 2)}\n`);
}

/** The size at which the recording also runs the lab's connection step (its check expects 1,000 generated Services). */
const STEP_AT = 1000;

async function measure(mode: Mode, settings: Settings): Promise<ConnectionPoint[]> {
  const script = readFileSync(join(manifests, 'connect-cost.sh'), 'utf8');
  const cluster = seat === null ? `dplab-${mode}` : `dplab-${seat}-${mode}`;
  const node = `${cluster}-worker`;
  const kubeconfig = join(state(), 'kube', `${cluster}.yaml`);
  const labEnv = { ...benchEnv(), KUBECONFIG: kubeconfig, DPLAB_CLUSTER: cluster, DPLAB_MODE: mode };
  const kubectl = (...a: string[]) => must('kubectl', ['--kubeconfig', kubeconfig, ...a], { timeoutMs: 10 * 60_000 });
  const count = () =>
    Number(
      must('sh', [join(manifests, 'count.sh')], { env: labEnv })
        .stdout.trim()
        .split('\n')
        .pop(),
    );

  const started = performance.now();
  let web = '';

  /** Count every 5 s until three counts agree and the growth covers the Services (at most 15 min). */
  let floor: number | undefined;
  const settle = (services: number): { entries: number; seconds: number } => {
    const t = performance.now();
    const seen: number[] = [];
    while (performance.now() - t < 15 * 60_000) {
      seen.push(count());
      const last = seen.slice(-3);
      const grown = floor === undefined || last[0] - floor >= services;
      if (last.length === 3 && last.every((v) => v === last[0]) && grown)
        return { entries: last[0], seconds: (performance.now() - t) / 1000 };
      sleep(5000);
    }
    throw new Error(`${mode}: the dataplane did not settle at ${services} Services in 15 min (counts ${seen.slice(-6).join(', ')}).`);
  };

  const time = (which: 'first' | 'last'): ConnectRun => {
    for (let attempt = 1; ; attempt++) {
      const r = must('docker', [
        'exec',
        node,
        ...onNodeArgs(mode, {
          script,
          namespace: NS,
          target: `${NS}/web ${web}`,
          samples: settings.samples,
          warmUp: settings.warmUp,
          which,
        }),
      ]);
      const parsed = parseConnectRun(r.stdout);
      if (!parsed || !parsed.samples.length) throw new Error(`${mode}: connect-cost.sh timed nothing:\n${r.out.slice(-2000)}`);
      // kube-proxy rewrote KUBE-SERVICES in another order while we timed: time again.
      if (parsed.position && parsed.position.aheadAfter !== parsed.position.ahead && attempt < 4) {
        log(`${mode}: KUBE-SERVICES changed during the timing (${parsed.position.ahead} → ${parsed.position.aheadAfter} ahead); again`);
        continue;
      }
      return parsed;
    }
  };

  const points: ConnectionPoint[] = [];
  try {
    log(`${mode}: dplab up`);
    dplab('up', mode);
    dplab('reset', 'scale-compare', '--mode', mode);
    kubectl('-n', NS, 'rollout', 'status', 'deployment/web', '--timeout=5m');
    // The Service every point times (on iptables also at 0 generated Services, where the lab has no other): web, in front of the same pods.
    kubectl('-n', NS, 'expose', 'deployment', 'web', '--port', '80', '--target-port', '8080');
    web = kubectl('-n', NS, 'get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP} {.spec.ports[0].port}').stdout.trim();
    for (const services of settings.sizes) {
      const t = performance.now();
      if (services > 0) {
        log(`${mode}: creating Services up to ${services}`);
        must('sh', [join(manifests, 'make-services.sh'), String(services)], { env: labEnv, timeoutMs: 60 * 60_000 });
      }
      const made = (performance.now() - t) / 1000;
      const { entries, seconds } = settle(services);
      if (services === 0) floor = entries;
      const last = time('last');
      const s = summarise(last.samples)!;
      const point: ConnectionPoint = {
        services,
        entries,
        target: last.target.name,
        samples: s.samples,
        failed: last.failed,
        medianUs: s.medianUs,
        p90Us: s.p90Us,
        settledSeconds: Math.round(made + seconds),
        at: new Date().toISOString(),
      };
      if (last.position) {
        point.ahead = last.position.ahead;
        point.rulesInChain = last.position.total;
        const first = time('first');
        const f = summarise(first.samples)!;
        point.first = {
          target: first.target.name,
          ahead: first.position?.ahead ?? 0,
          medianUs: f.medianUs,
          p90Us: f.p90Us,
          samples: f.samples,
        };
      }
      points.push(point);
      if (services === STEP_AT) {
        // The cluster stands where scale-compare's connection step starts: run its contract here and record it, as verify-labs would.
        log(`${mode}: scale-compare's connect step, recorded`);
        const row = await verifyStepInPlace(requireLab('scale-compare'), 'connect', mode, { record: true, log: (l) => log(l) });
        log(`${mode}: connect step: unsolved ${row.unsolved}, solved ${row.solved}${row.breach ? `; BREACH: ${row.breach}` : ''}`);
      }
      log(
        `${mode} @ ${services}: ${entries} ${ENTRY_COUNTS[mode].what}; median ${s.medianUs} µs, p90 ${s.p90Us} µs (${s.samples})` +
          (point.ahead === undefined ? '' : `, ${point.ahead} rules ahead; first: ${point.first?.medianUs} µs`) +
          ` (created in ${made.toFixed(0)} s, settled in ${seconds.toFixed(0)} s)`,
      );
      save(
        {
          mode,
          recorded: true,
          entriesLabel: ENTRY_COUNTS[mode].what,
          node,
          seconds: Math.round((performance.now() - started) / 1000),
          points: [...points],
        },
        kubernetesVersion(kubeconfig),
        settings,
      );
    }
  } finally {
    if (settings.keep) log(`${mode}: ${cluster} left up (--keep)`);
    else {
      log(`${mode}: dplab down`);
      run('node', ['scripts/dplab.mjs', 'down', mode]);
    }
  }
  log(`${mode}: recorded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return points;
}

function kubernetesVersion(kubeconfig: string): string {
  const r = run('kubectl', ['--kubeconfig', kubeconfig, 'version', '-o', 'json']);
  try {
    return (JSON.parse(r.stdout) as { serverVersion?: { gitVersion?: string } }).serverVersion?.gitVersion ?? `v${KUBERNETES_VERSION}`;
  } catch {
    return `v${KUBERNETES_VERSION}`;
  }
}

/** Each point beside its mode's floor (0 Services) and beside nftables at the same size; then one table, mode × size. */
export function rows(file: ConnectionCost): BenchRow[] {
  const recorded = file.modes.filter((m) => m.recorded);
  const at = (mode: string, services: number) => recorded.find((m) => m.mode === mode)?.points.find((p) => p.services === services);
  return recorded.flatMap((m) =>
    m.points.map((p): BenchRow => {
      const floor = at(m.mode, 0);
      const peerMode = m.mode === 'nftables' ? 'iptables' : 'nftables';
      const peer = at(peerMode, p.services);
      const ahead = p.ahead === undefined ? '' : `, ${p.ahead.toLocaleString('en')} rules ahead; first rule ${p.first?.medianUs} µs`;
      return {
        measure: `${m.mode} @ ${p.services.toLocaleString('en')} Services: new connection, median (p90 ${p.p90Us} µs, ${p.samples} samples, ${p.entries.toLocaleString('en')} entries${ahead})`,
        unit: 'µs',
        ours: p.medianUs,
        ...(peer ? { peer: { name: `${peerMode} @ same size`, value: peer.medianUs } } : {}),
        ...(floor && p.services > 0 ? { limit: { name: `${m.mode} @ 0 Services`, value: floor.medianUs } } : {}),
      };
    }),
  );
}

export function sideBySide(file: ConnectionCost): string {
  const sizes = [...new Set(file.modes.flatMap((m) => (m.recorded ? m.points.map((p) => p.services) : [])))].sort((a, b) => a - b);
  const head = `| mode | ${sizes.map((s) => `${s.toLocaleString('en')} Services`).join(' | ')} |`;
  const lines = file.modes.map((m) => {
    if (!m.recorded) return `| ${m.mode} | ${sizes.map(() => 'not recorded yet').join(' | ')} |`;
    const cells = sizes.map((s) => {
      const p = m.points.find((x) => x.services === s);
      return p
        ? `${p.medianUs} µs (p90 ${p.p90Us}; ${p.entries.toLocaleString('en')} entries${p.ahead === undefined ? '' : `, ${p.ahead.toLocaleString('en')} ahead`})`
        : '—';
    });
    return `| ${m.mode} | ${cells.join(' | ')} |`;
  });
  return [head, `|${' --- |'.repeat(sizes.length + 1)}`, ...lines].join('\n');
}

async function main(): Promise<void> {
  const chosen = settings(process.argv.slice(2));
  seat = chosen.seat;
  // The lab's engine (the connection step's contract) runs in this process: it finds the cluster by these.
  if (seat !== null) Object.assign(process.env, { DPLAB_SEAT: seat, DPLAB_STATE_DIR: state() });
  for (const tool of ['docker', 'kind']) {
    if (run(tool, tool === 'docker' ? ['info', '--format', '{{.ServerVersion}}'] : ['version'], { timeoutMs: 20_000 }).status !== 0) {
      process.stderr.write(`connection-cost not run: it needs ${tool} (on these machines \`. ~/.cache/dplab/testenv/env.sh\`).\n`);
      process.exit(2);
    }
  }
  const t = performance.now();
  for (const mode of chosen.modes) await measure(mode, chosen);
  const file = load()!;
  log(`recorded ${chosen.modes.join(', ')} in ${((performance.now() - t) / 1000).toFixed(0)} s; ${RECORDING}`);
  process.stdout.write(`\nMedian time of a new TCP connection to a ClusterIP, from the first worker:\n\n${sideBySide(file)}\n\n`);
  report('connection-cost', rows(file));
}

if (process.argv[1]?.endsWith('connection-cost.ts')) await main();
