/**
 * "A node's conntrack table holds entries for address A" (syllabus I5; also E1, where Cilium's
 * socket LB leaves none for a ClusterIP). kind nodes ship conntrack-tools; `conntrack -L -d A`
 * lists entries whose original destination is A, one per line:
 *   tcp 6 117 TIME_WAIT src=10.244.1.9 dst=10.96.87.210 sport=41234 dport=80 src=10.244.2.3 dst=10.244.1.9 sport=8080 dport=41234 [ASSURED] mark=0 use=1
 * The reply half shows where the packets really went: after DNAT, the pod.
 */
import { z } from 'zod';
import { commandObservationSchema, gatherNodeCommand } from './command.ts';
import type { GatherContext } from './types.ts';

const CONNTRACK_SYSCTLS = ['/proc/sys/net/netfilter/nf_conntrack_count', '/proc/sys/net/netfilter/nf_conntrack_max'] as const;

export interface ConntrackEntry {
  protocol: string;
  state: string | null;
  original: { src: string; dst: string; sport: number; dport: number };
  reply: { src: string; dst: string; sport: number; dport: number } | null;
}

export const conntrackObservationSchema = z.object({
  node: z.string(),
  destination: z.string(),
  /** `conntrack -L -d <destination>` */
  list: commandObservationSchema,
  /** `cat nf_conntrack_count nf_conntrack_max`: two numbers, one per line. */
  sysctls: commandObservationSchema,
});
export type ConntrackObservation = z.infer<typeof conntrackObservationSchema>;

export async function gatherConntrack(ctx: GatherContext, node: string, destination: string): Promise<ConntrackObservation> {
  const [list, sysctls] = await Promise.all([
    gatherNodeCommand(ctx, node, ['conntrack', '-L', '-d', destination]),
    gatherNodeCommand(ctx, node, ['cat', ...CONNTRACK_SYSCTLS]),
  ]);
  return { node, destination, list, sysctls };
}

/** Entries of `conntrack -L` output; lines that are not entries (the summary goes to stderr) are skipped. */
export function parseConntrack(text: string): ConntrackEntry[] {
  const out: ConntrackEntry[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\w+)\s+\d+\s+\d+\s+(?:([A-Z_]+)\s+)?(.*)$/.exec(line.trim());
    if (!m) continue;
    const tuples = [...m[3].matchAll(/src=(\S+) dst=(\S+) sport=(\d+) dport=(\d+)/g)].map((t) => ({
      src: t[1],
      dst: t[2],
      sport: Number(t[3]),
      dport: Number(t[4]),
    }));
    if (!tuples[0]) continue;
    out.push({ protocol: m[1], state: m[2] ?? null, original: tuples[0], reply: tuples[1] ?? null });
  }
  return out;
}

/** nf_conntrack_count and nf_conntrack_max, or nulls when they could not be read. */
export function conntrackUsage(obs: ConntrackObservation): { count: number | null; max: number | null } {
  if (obs.sysctls.exitCode !== 0) return { count: null, max: null };
  const [count, max] = obs.sysctls.stdout.trim().split(/\s+/).map(Number);
  return { count: Number.isFinite(count) ? count : null, max: Number.isFinite(max) ? max : null };
}
