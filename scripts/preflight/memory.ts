/** Enough memory for the clusters about to start. */
import type { DockerInfo } from './docker.ts';
import type { Finding, PreflightSystem } from './types.ts';

import { clusterMemoryText, gib } from '../catalogue/footprint.ts';
import { CLUSTER_FOOTPRINT, MODE_INFO, type Mode } from '../catalogue/modes.ts';

/** The smallest cluster's figure (a kube-proxy mode's), which the portal benchmark weighs a seat's runner against. */
export const MEMORY_PER_CLUSTER_BYTES = CLUSTER_FOOTPRINT.iptables.memoryBytes;

/**
 * What `clusters` clusters of the asked modes need (CLUSTER_BUDGETS in scripts/base/versions.ts
 * says where the figures come from): with one mode, exactly; with several (the doctor over every
 * mode), the smallest cluster must fit, and the modes whose cluster does not fit are named. Under
 * half of it, provisioning will thrash or OOM.
 */
export function checkMemory(system: PreflightSystem, modes: readonly Mode[], clusters: number, docker?: DockerInfo): Finding {
  const base = { id: 'memory', title: 'Free memory' };
  if (clusters <= 0 || modes.length === 0) return { ...base, status: 'ok', detail: 'No new cluster asked for.' };
  const each = (m: Mode) => clusters * CLUSTER_FOOTPRINT[m].memoryBytes;
  const need = Math.min(...modes.map(each));
  const plural = clusters === 1 ? 'one cluster needs' : `${clusters} clusters need`;
  const needs = `${plural} ${clusters === 1 ? clusterMemoryText(modes) : `about ${gib(need)}`}`;
  // In a VM the VM's size is the ceiling; this machine's free memory says little about it.
  const vm = system.platform !== 'linux' || docker?.desktop;
  const have = vm ? (docker?.memTotal ?? 0) : system.memAvailableBytes();
  const fix = vm
    ? `Give the Docker VM at least ${gib(Math.max(...modes.map(each)))} (Docker Desktop: Settings → Resources → Memory), or run fewer clusters (\`dplab down <mode>\`).`
    : `Free memory (close applications) or run fewer clusters at once (\`dplab status\`, then \`dplab down <mode>\`).`;
  if (!have) return { ...base, status: 'warn', detail: `Could not tell how much memory Docker can use; ${needs}.`, fix };
  const where = vm ? 'the Docker VM has' : 'available';
  const detail = `${gib(have)} ${where}; ${needs}.`;
  const short = modes.filter((m) => have < each(m));
  if (short.length === 0) return { ...base, status: 'ok', detail };
  if (short.length < modes.length)
    return { ...base, status: 'warn', detail: `${detail} Not enough for ${short.map((m) => MODE_INFO[m].short).join(', ')}.`, fix };
  return { ...base, status: have < need / 2 ? 'fail' : 'warn', detail, fix };
}
