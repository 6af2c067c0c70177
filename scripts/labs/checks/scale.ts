/**
 * "How big is the dataplane, and how long does kube-proxy take to rewrite it?" (syllabus I4, C2).
 * One headline count per mode, measured on one node the same way the lab's count script does it,
 * plus kube-proxy's sync-time histogram from its metrics endpoint (there is none on Cilium).
 */
import { agentExec, agentOf, kubeProxyMode, perMode, type Agent, type Mode } from '../../catalogue/modes.ts';
import { CommandError } from '../../base/exec.ts';
import { z } from 'zod';
import { commandObservationSchema, observeCommand } from './command.ts';
import type { Figure, GatherContext } from './types.ts';

export interface EntryCount {
  /** What the number counts, in the learner's words. */
  what: string;
  /** null: run inside the node; else in any pod of this agent. */
  agent: Agent | null;
  command: readonly string[];
}

/** Each mode's count, from its record (keep in step with labs/scale-compare/manifests/count.sh). */
export const ENTRY_COUNTS: Readonly<Record<Mode, EntryCount>> = perMode((r) => ({ ...r.rules.count, agent: agentOf(r.id) }));

/** kube-proxy's histogram of full rule syncs (pkg/proxy/metrics), in seconds. */
export const SYNC_METRIC = 'kubeproxy_sync_proxy_rules_duration_seconds';

export const scaleObservationSchema = z.object({
  node: z.string(),
  count: commandObservationSchema,
  /** Only kube-proxy's sync-duration lines of /metrics; null on Cilium or when kube-proxy did not answer. */
  syncMetrics: z.string().nullable(),
});
export type ScaleObservation = z.infer<typeof scaleObservationSchema>;

/** The node where both the count and the metrics are read: the first worker, like count.sh. */
export async function scaleNode(ctx: GatherContext): Promise<string> {
  const all = await ctx.cluster.nodes({ signal: ctx.signal });
  return all.find((n) => n.endsWith('-worker')) ?? all[0];
}

export async function gatherScale(ctx: GatherContext): Promise<ScaleObservation> {
  const node = await scaleNode(ctx);
  const how = ENTRY_COUNTS[ctx.mode];
  const agent = how.agent;
  const count = await observeCommand(() =>
    agent
      ? ctx.cluster.kubectl(agentExec(agent, how.command), { signal: ctx.signal })
      : ctx.cluster.nodeExec(node, how.command, { signal: ctx.signal }),
  );
  let syncMetrics: string | null = null;
  if (kubeProxyMode(ctx.mode)) {
    try {
      const text = await ctx.cluster.metrics(node, { signal: ctx.signal });
      syncMetrics = text
        .split('\n')
        .filter((l) => l.startsWith(SYNC_METRIC))
        .join('\n');
    } catch (err) {
      if (!(err instanceof CommandError && err.kind === 'failed')) throw err;
    }
  }
  return { node, count, syncMetrics };
}

/** `grep -c` prints the number even when it exits 1 (no match), so read stdout first. */
export function entryCount(obs: ScaleObservation): number | null {
  const n = Number.parseInt(obs.count.stdout.trim().split('\n').pop() ?? '', 10);
  return Number.isFinite(n) ? n : null;
}

export interface SyncTime {
  syncs: number;
  totalSeconds: number;
  averageMs: number;
  /** Upper bound of the bucket holding the 90th percentile, in ms (Prometheus histogram buckets). */
  p90Ms: number | null;
}

/**
 * Since Kubernetes 1.33 kube-proxy's metrics carry an `ip_family` label (one series per family,
 * the unused one with zero syncs): series are summed over their labels, buckets per `le`.
 */
export function syncTime(metrics: string | null): SyncTime | null {
  if (!metrics) return null;
  const sums = new Map<string, number>();
  for (const m of metrics.matchAll(new RegExp(`^${SYNC_METRIC}_(bucket|sum|count)(?:\\{([^}]*)\\})?\\s+(\\S+)`, 'gm'))) {
    const le = m[1] === 'bucket' ? /(?:^|,)le="([^"]+)"/.exec(m[2] ?? '')?.[1] : '';
    if (le === undefined) continue;
    const key = `${m[1]}:${le}`;
    sums.set(key, (sums.get(key) ?? 0) + Number(m[3]));
  }
  const syncs = sums.get('count:') ?? Number.NaN;
  const total = sums.get('sum:') ?? Number.NaN;
  if (!Number.isFinite(syncs) || !Number.isFinite(total) || syncs <= 0) return null;
  const buckets = [...sums]
    .filter(([k]) => k.startsWith('bucket:'))
    .map(([k, n]) => ({ le: Number(k.slice(7)), n }))
    .sort((x, y) => x.le - y.le);
  const p90 = buckets.find((b) => b.n >= 0.9 * syncs);
  return { syncs, totalSeconds: total, averageMs: (total / syncs) * 1000, p90Ms: p90 && Number.isFinite(p90.le) ? p90.le * 1000 : null };
}

/**
 * One measurement as figures a page can plot (scale-compare's chart): how many generated
 * Services, how many entries, and kube-proxy's sync time where there is a kube-proxy.
 * Undefined when the count could not be read: there is nothing to plot.
 */
export function scaleFigures(obs: ScaleObservation, mode: Mode, services: number): Record<string, Figure> | undefined {
  const entries = entryCount(obs);
  if (entries === null) return undefined;
  const figures: Record<string, Figure> = {
    services: { value: services, label: 'generated Services' },
    entries: { value: entries, label: ENTRY_COUNTS[mode].what },
  };
  const sync = syncTime(obs.syncMetrics);
  if (sync) {
    figures.syncMsAvg = { value: Math.round(sync.averageMs * 10) / 10, label: 'kube-proxy sync time, average (ms)' };
    if (sync.p90Ms !== null) figures.syncMsP90 = { value: sync.p90Ms, label: 'kube-proxy sync time, 90th percentile bucket (ms)' };
  }
  return figures;
}
