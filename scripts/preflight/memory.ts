/** Enough memory for the clusters about to start. */
import type { DockerInfo } from './docker.ts';
import type { Finding, PreflightSystem } from './types.ts';

import { CLUSTER_FOOTPRINT } from '../base/versions.ts';

/**
 * The floor we ask per cluster (CLUSTER_FOOTPRINT in scripts/base/versions.ts says where
 * the figures come from); under half of it, provisioning will thrash or OOM.
 */
export const MEMORY_PER_CLUSTER_BYTES = CLUSTER_FOOTPRINT.iptables.memoryBytes;
const GiB = 1024 ** 3;

const fmt = (bytes: number) => `${(bytes / GiB).toFixed(1)} GiB`;

export function checkMemory(system: PreflightSystem, clusters: number, docker?: DockerInfo): Finding {
  const base = { id: 'memory', title: 'Free memory' };
  if (clusters <= 0) return { ...base, status: 'ok', detail: 'No new cluster asked for.' };
  const need = clusters * MEMORY_PER_CLUSTER_BYTES;
  const plural = clusters === 1 ? 'one cluster needs' : `${clusters} clusters need`;
  // In a VM the VM's size is the ceiling; this machine's free memory says little about it.
  const vm = system.platform !== 'linux' || docker?.desktop;
  const have = vm ? (docker?.memTotal ?? 0) : system.memAvailableBytes();
  if (!have)
    return {
      ...base,
      status: 'warn',
      detail: 'Could not tell how much memory Docker can use.',
      fix: `Make sure Docker can use at least ${fmt(need)}.`,
    };
  const where = vm ? 'the Docker VM has' : 'available';
  const fix = vm
    ? `Give the Docker VM at least ${fmt(need)} (Docker Desktop: Settings → Resources → Memory), or run fewer clusters (\`dplab down <mode>\`).`
    : `Free memory (close applications) or run fewer clusters at once (\`dplab status\`, then \`dplab down <mode>\`).`;
  if (have >= need) return { ...base, status: 'ok', detail: `${fmt(have)} ${where}; ${plural} about ${fmt(need)}.` };
  return { ...base, status: have < need / 2 ? 'fail' : 'warn', detail: `${fmt(have)} ${where}; ${plural} about ${fmt(need)}.`, fix };
}
