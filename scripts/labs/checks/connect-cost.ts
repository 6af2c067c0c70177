/**
 * "What does a new connection to a ClusterIP cost?" (syllabus C2): scale-compare's
 * connect-cost.sh, run on the first worker, opens connections with bash's /dev/tcp and prints
 * one line per timed connect (`sample <µs>`), the Service it chose (`target`) and, on iptables,
 * where that Service's rule stands in KUBE-SERVICES before and after timing (`position`,
 * `position-after`). This module reads that output, summarises it the way the script does
 * (nearest rank), and gathers it through the cluster handle for a check.
 */
import { z } from 'zod';
import type { Mode } from '../../catalogue/modes.ts';
import { commandObservationSchema, IN_CLUSTER_COMMAND_TIMEOUT_MS, observeCommand } from './command.ts';
import type { Figure, GatherContext } from './types.ts';

export interface ConnectRun {
  /** `ns/name`, its ClusterIP and port. */
  target: { name: string; ip: string; port: number };
  /** iptables: KUBE-SERVICES rules ahead of the target's rule, of how many, before and after timing. */
  position?: { ahead: number; total: number; aheadAfter: number | null };
  failed: number;
  /** Each timed connect in microseconds, in the order taken. */
  samples: number[];
}

export interface ConnectSummary {
  samples: number;
  medianUs: number;
  p90Us: number;
}

/** Read connect-cost.sh's on-node output; null when it names no target (the script failed before timing). */
export function parseConnectRun(stdout: string): ConnectRun | null {
  let target: ConnectRun['target'] | undefined;
  let position: ConnectRun['position'];
  let failed = 0;
  const samples: number[] = [];
  for (const line of stdout.split('\n')) {
    const [word, ...rest] = line.trim().split(/\s+/);
    const n = rest.map(Number);
    if (word === 'target' && rest.length === 3 && Number.isInteger(n[2])) target = { name: rest[0], ip: rest[1], port: n[2] };
    else if (word === 'position' && n.length === 2 && n.every(Number.isInteger))
      position = { ahead: n[0] - 1, total: n[1], aheadAfter: null };
    else if (word === 'position-after' && position && Number.isInteger(n[0])) position.aheadAfter = n[0] - 1;
    else if (word === 'failed' && Number.isInteger(n[0])) failed = n[0];
    else if (word === 'sample' && Number.isFinite(n[0]) && n[0] >= 0) samples.push(n[0]);
  }
  return target ? { target, ...(position ? { position } : {}), failed, samples } : null;
}

/** The k-th smallest for the q-quantile by nearest rank (ceil(q·n)), as connect-cost.sh's awk takes it. */
function nearestRank(sorted: readonly number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(Math.round(q * sorted.length * 1e6) / 1e6) - 1)];
}

export function summarise(samples: readonly number[]): ConnectSummary | null {
  if (!samples.length) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  return { samples: sorted.length, medianUs: nearestRank(sorted, 0.5), p90Us: nearestRank(sorted, 0.9) };
}

export const connectObservationSchema = z.object({
  node: z.string(),
  /** connect-cost.sh's on-node output (or its error). */
  run: commandObservationSchema,
});
export type ConnectObservation = z.infer<typeof connectObservationSchema>;

export interface ConnectOptions {
  /** The script's text (labs/scale-compare/manifests/connect-cost.sh), run on the node with `bash -c`. */
  script: string;
  namespace: string;
  /** The target on modes other than iptables: `ns/name ip port`. */
  target: string;
  samples: number;
  warmUp: number;
  which?: 'first' | 'last';
}

/** The script's on-node arguments: iptables chooses its target from KUBE-SERVICES on the node. */
export function onNodeArgs(mode: Mode, o: ConnectOptions): string[] {
  return [
    'bash',
    '-c',
    o.script,
    'connect-cost',
    'on-node',
    o.namespace,
    o.which ?? 'last',
    String(o.samples),
    String(o.warmUp),
    mode === 'iptables' ? 'iptables' : o.target,
  ];
}

/** Run the measurement on `node` (the first worker, where the lab counts too). */
export async function gatherConnect(ctx: GatherContext, node: string, o: ConnectOptions): Promise<ConnectObservation> {
  const run = await observeCommand(() =>
    ctx.cluster.nodeExec(node, onNodeArgs(ctx.mode, o), { signal: ctx.signal, timeoutMs: IN_CLUSTER_COMMAND_TIMEOUT_MS }),
  );
  return { node, run };
}

/** The measurement as figures for the scale chart: median and p90, and on iptables the rules ahead. */
export function connectFigures(run: ConnectRun | null): Record<string, Figure> {
  const s = run && summarise(run.samples);
  if (!s) return {};
  const figures: Record<string, Figure> = {
    connectUs: { value: s.medianUs, label: `new TCP connection to a ClusterIP, median of ${s.samples} (µs)` },
    connectP90Us: { value: s.p90Us, label: 'new TCP connection, 90th percentile (µs)' },
  };
  if (run.position) figures.connectAhead = { value: run.position.ahead, label: 'KUBE-SERVICES rules ahead of its rule' };
  return figures;
}
