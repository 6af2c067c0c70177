/**
 * The author contract, run against live clusters: per lab, per mode, per step —
 * (setup once per lab and mode) → check must fail → solve → check must pass.
 * With `record`, each check's observations are written next to the lab, marked as recorded
 * with the kind and Kubernetes versions, so `npm test` replays them on machines without Docker.
 */
import { run, TIMEOUTS } from '../base/exec.ts';
import { type ClusterHandle } from '../clusters/handle.ts';
import { clusterHandle } from '../clusters/providers.ts';
import { release } from 'node:os';
import { z } from 'zod';
import { kindOverlay } from '../clusters/kind-overlay.ts';
import { kubeVersionSchema, listOf } from '../clusters/kube-objects.ts';
import type { Mode } from '../catalogue/modes.ts';
import { runCheck, type CheckResult } from './engine.ts';
import { formatTable } from './format.ts';
import { observationFileName, writeObservationFile, type ObservationFile } from './observations.ts';
import { resetLab, restoreCluster } from './reset.ts';
import type { Lab } from './schema.ts';
import { applySolution } from './solve.ts';
import { describeClusterError } from '../clusters/cluster-errors.ts';
import { componentVersions } from '../sim/components.ts';

type Outcome = CheckResult['status'] | 'skipped';

interface HarnessRow {
  lab: string;
  mode: Mode;
  step: string;
  unsolved: Outcome;
  solved: Outcome;
  ms: number;
  /** Why the row breaks the contract (empty when it holds). */
  breach?: string;
}

export interface HarnessOptions {
  modes?: readonly Mode[];
  record?: boolean;
  /** Tests inject handles; by default each mode's real cluster. */
  cluster?: (mode: Mode) => ClusterHandle;
  /** Progress lines ("first-service on iptables: setup…"). */
  log?: (line: string) => void;
  /** Settle window for the solved check (default: the step's own). */
  settleMs?: number;
}

export interface HarnessReport {
  rows: HarnessRow[];
  ok: boolean;
  table: string;
}

const nodeInfoSchema = listOf(
  z
    .object({
      status: z
        .object({
          nodeInfo: z
            .object({ kubeletVersion: z.string(), containerRuntimeVersion: z.string(), kernelVersion: z.string(), osImage: z.string() })
            .partial()
            .passthrough()
            .optional(),
        })
        .passthrough()
        .optional(),
    })
    .passthrough(),
);
const podImagesSchema = listOf(
  z
    .object({
      spec: z
        .object({ containers: z.array(z.object({ name: z.string(), image: z.string() }).passthrough()) })
        .passthrough()
        .optional(),
    })
    .passthrough(),
);

/**
 * What a kind cluster is made of, read from the cluster itself: the nodes' kubelet, runtime,
 * kernel and OS, every kube-system container's image (kube-proxy, CoreDNS, kindnet, Cilium…),
 * and the kind overlay when the test environment made it.
 */
async function kindComponents(cluster: ClusterHandle): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const nodes = await cluster.kubectlJson(['get', 'nodes'], nodeInfoSchema, { timeoutMs: TIMEOUTS.quick });
  const info = nodes.items?.[0]?.status?.nodeInfo;
  if (info?.kubeletVersion) out.kubelet = info.kubeletVersion;
  if (info?.containerRuntimeVersion) out.runtime = info.containerRuntimeVersion;
  if (info?.kernelVersion) out.kernel = info.kernelVersion;
  if (info?.osImage) out.os = info.osImage;
  const pods = await cluster.kubectlJson(['-n', 'kube-system', 'get', 'pods'], podImagesSchema, { timeoutMs: TIMEOUTS.quick });
  for (const pod of pods.items ?? []) for (const c of pod.spec?.containers ?? []) out[c.name] ??= c.image;
  const overlay = kindOverlay();
  if (overlay) out.environment = overlay.name;
  return out;
}

async function recordedSource(cluster: ClusterHandle): Promise<Extract<ObservationFile['source'], { kind: 'recorded' }>> {
  const kube = await cluster.kubectlJson(['version'], kubeVersionSchema, { timeoutMs: TIMEOUTS.quick });
  const base = {
    kind: 'recorded' as const,
    kubernetesVersion: kube.serverVersion?.gitVersion ?? 'unknown',
    date: new Date().toISOString(),
  };
  if (cluster.provider === 'sim') return { ...base, provider: 'sim', components: { ...componentVersions(), kernel: release() } };
  const kind = await run('kind', ['version'], { timeoutMs: TIMEOUTS.quick });
  return { ...base, provider: 'kind', kindVersion: kind.stdout.trim(), components: await kindComponents(cluster) };
}

function record(lab: Lab, mode: Mode, r: CheckResult, state: 'unsolved' | 'solved', source: ObservationFile['source']): void {
  if (r.status === 'error') return;
  writeObservationFile(lab.id, observationFileName(r.step, state, mode, source.kind === 'recorded' ? source.provider : undefined), {
    source,
    expect: { status: r.status, message: r.message },
    observations: r.observations,
  });
}

/**
 * One lab on one mode, then its cluster-wide changes undone (`setup.restore`: the scheduler, a
 * package in the nodes, a node label), whether the contract held or not: the next lab verified on
 * this cluster starts from the cluster as it was, and its recordings show nothing of this one.
 */
async function verifyMode(lab: Lab, mode: Mode, opts: HarnessOptions): Promise<HarnessRow[]> {
  const log = opts.log ?? (() => {});
  const cluster = opts.cluster?.(mode) ?? clusterHandle(mode);
  const rows = await verifySteps(lab, mode, cluster, opts);
  if (lab.setup.restore.length === 0) return rows;
  log(`${lab.id} on ${mode}: restore what it changed outside its namespace`);
  try {
    for (const note of await restoreCluster(lab, cluster)) log(`${lab.id} on ${mode}: ${note}`);
  } catch (err) {
    const last = rows.at(-1);
    const why = `restore failed: ${describeClusterError(err, mode, 'restore', false).message}`;
    if (last) last.breach ??= why;
  }
  return rows;
}

async function verifySteps(lab: Lab, mode: Mode, cluster: ClusterHandle, opts: HarnessOptions): Promise<HarnessRow[]> {
  const log = opts.log ?? (() => {});
  const rows: HarnessRow[] = [];
  const rest = (from: number, why: string) =>
    lab.steps
      .slice(from)
      .map((s) => ({ lab: lab.id, mode, step: s.id, unsolved: 'skipped' as Outcome, solved: 'skipped' as Outcome, ms: 0, breach: why }));

  log(`${lab.id} on ${mode}: setup`);
  try {
    await resetLab(lab, mode, { cluster });
  } catch (err) {
    return rest(0, `setup failed: ${describeClusterError(err, mode, 'setup', false).message}`);
  }
  const source = opts.record ? await recordedSource(cluster) : undefined;

  for (const [i, step] of lab.steps.entries()) {
    const { row, stop } = await stepContract(lab, step, mode, cluster, source, opts);
    rows.push(row);
    if (stop) return [...rows, ...rest(i + 1, stop)];
  }
  return rows;
}

/**
 * One step's contract on a cluster already brought to the start of it: the check fails, the
 * solution is applied, the check passes; each check's observations recorded when `source` is
 * given. `stop` says why the steps after it cannot run.
 */
async function stepContract(
  lab: Lab,
  step: Lab['steps'][number],
  mode: Mode,
  cluster: ClusterHandle,
  source: Extract<ObservationFile['source'], { kind: 'recorded' }> | undefined,
  opts: HarnessOptions,
): Promise<{ row: HarnessRow; stop?: string }> {
  const log = opts.log ?? (() => {});
  const started = performance.now();
  const row: HarnessRow = { lab: lab.id, mode, step: step.id, unsolved: 'skipped', solved: 'skipped', ms: 0 };
  const done = (stop?: string) => {
    row.ms = Math.round(performance.now() - started);
    return stop ? { row, stop } : { row };
  };
  log(`${lab.id} on ${mode}: ${step.id}: check (must fail)`);
  const before = await runCheck(lab, step, mode, { cluster });
  row.unsolved = before.status;
  if (source) record(lab, mode, before, 'unsolved', source);
  if (before.status === 'error') {
    row.breach = `check errored: ${before.message}`;
    return done('not run after an error');
  }
  if (before.status === 'pass') row.breach = 'check passed before the solution was applied';
  log(`${lab.id} on ${mode}: ${step.id}: solve`);
  try {
    await applySolution(lab, step, mode, { cluster });
  } catch (err) {
    row.breach = `solution failed: ${err instanceof Error ? err.message : String(err)}`;
    return done('not run after a failed solution');
  }
  log(`${lab.id} on ${mode}: ${step.id}: check (must pass)`);
  const after = await runCheck(lab, step, mode, { cluster, settleMs: opts.settleMs });
  row.solved = after.status;
  if (source) record(lab, mode, after, 'solved', source);
  if (after.status !== 'pass') row.breach ??= `check did not pass after the solution: ${after.message}`;
  return done();
}

/**
 * One step's contract where the cluster stands now, without the lab's setup or the steps before
 * (the caller brought it there: a benchmark that made the step's Services anyway), recorded
 * with `record`. The row says whether the contract held.
 */
export async function verifyStepInPlace(lab: Lab, stepId: string, mode: Mode, opts: HarnessOptions = {}): Promise<HarnessRow> {
  const step = lab.steps.find((s) => s.id === stepId);
  if (!step) throw new Error(`${lab.id} has no step ${stepId}`);
  const cluster = opts.cluster?.(mode) ?? clusterHandle(mode);
  const source = opts.record ? await recordedSource(cluster) : undefined;
  return (await stepContract(lab, step, mode, cluster, source, opts)).row;
}

export const TABLE_HEADER = ['lab', 'mode', 'step', 'unsolved', 'solved', 'time'];

function cell(outcome: Outcome, want: 'pass' | 'fail'): string {
  return outcome === 'skipped' ? '-' : `${outcome} ${outcome === want ? '✓' : '✗'}`;
}

function resultsTable(rows: readonly HarnessRow[]): string {
  return formatTable(
    TABLE_HEADER,
    rows.map((r) => [r.lab, r.mode, r.step, cell(r.unsolved, 'fail'), cell(r.solved, 'pass'), `${(r.ms / 1000).toFixed(1)} s`]),
  );
}

export async function verifyLabs(labs: readonly Lab[], opts: HarnessOptions = {}): Promise<HarnessReport> {
  const rows: HarnessRow[] = [];
  for (const lab of labs) {
    for (const mode of lab.modes.filter((m) => !opts.modes || opts.modes.includes(m))) rows.push(...(await verifyMode(lab, mode, opts)));
  }
  return { rows, ok: rows.length > 0 && rows.every((r) => !r.breach), table: resultsTable(rows) };
}
