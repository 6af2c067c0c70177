/**
 * The host memory a cluster of each mode takes, as the pages and `dplab doctor` say it: every
 * figure comes from the modes' records (CLUSTER_FOOTPRINT), whose budgets (CLUSTER_BUDGETS in
 * scripts/base/versions.ts) say where they were measured.
 */
import type { Mode } from './modes.ts';
import { CLUSTER_FOOTPRINT, MODE_INFO } from './modes.ts';

const GiB = 1024 ** 3;

/** `2 GiB`, `1.5 GiB`: whole figures without decimals. */
export function gib(bytes: number): string {
  const n = bytes / GiB;
  return `${Number.isInteger(n) ? n : n.toFixed(1)} GiB`;
}

/** The memory for one cluster of each of `modes`, together. */
export function clustersMemoryBytes(modes: readonly Mode[]): number {
  return modes.reduce((sum, m) => sum + CLUSTER_FOOTPRINT[m].memoryBytes, 0);
}

/**
 * One cluster of any of these modes, in words: `about 2 GiB`, or `about 2 GiB (Cilium eBPF 4 GiB)`
 * when the modes differ.
 */
export function clusterMemoryText(modes: readonly Mode[]): string {
  const byBytes = new Map<number, Mode[]>();
  for (const m of modes) byBytes.set(CLUSTER_FOOTPRINT[m].memoryBytes, [...(byBytes.get(CLUSTER_FOOTPRINT[m].memoryBytes) ?? []), m]);
  const [common, ...rest] = [...byBytes.entries()].sort((a, b) => b[1].length - a[1].length || a[0] - b[0]);
  if (!common) return '';
  const others = rest.map(([bytes, ms]) => `${ms.map((m) => MODE_INFO[m].short).join(', ')} ${gib(bytes)}`);
  return `about ${gib(common[0])}${others.length ? ` (${others.join('; ')})` : ''}`;
}
