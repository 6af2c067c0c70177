/**
 * Room for a workshop: N seats on this host (the portal's local backend), each with its own
 * runner and one cluster per mode, against the host's available memory and CPUs. The
 * per-cluster figures and where they come from: each mode's `footprint`, a budget of CLUSTER_BUDGETS in scripts/base/versions.ts.
 */
import { SEAT_RUNNER_MEMORY_BYTES } from '../base/versions.ts';
import { CLUSTER_FOOTPRINT, type Mode } from '../catalogue/modes.ts';
import type { DockerInfo } from './docker.ts';
import type { Finding, PreflightSystem } from './types.ts';

const GiB = 1024 ** 3;
const fmt = (bytes: number) => `${(bytes / GiB).toFixed(1)} GiB`;

export interface SeatNeed {
  memoryBytes: number;
  cpus: number;
}

/** What `seats` seats need with a cluster of each of `modes` (pure: unit-tested). */
export function seatNeed(seats: number, modes: readonly Mode[]): SeatNeed {
  const perSeat = modes.reduce(
    (sum, m) => ({ memoryBytes: sum.memoryBytes + CLUSTER_FOOTPRINT[m].memoryBytes, cpus: sum.cpus + CLUSTER_FOOTPRINT[m].cpus }),
    {
      memoryBytes: SEAT_RUNNER_MEMORY_BYTES,
      cpus: 0,
    },
  );
  return { memoryBytes: seats * perSeat.memoryBytes, cpus: seats * perSeat.cpus };
}

/** How many seats fit, the smaller of what memory and CPUs allow. */
export function seatsThatFit(haveBytes: number, haveCpus: number, modes: readonly Mode[]): number {
  const one = seatNeed(1, modes);
  return Math.max(0, Math.min(Math.floor(haveBytes / one.memoryBytes), one.cpus ? Math.floor(haveCpus / one.cpus) : Infinity));
}

export function checkSeatCapacity(system: PreflightSystem, seats: number, modes: readonly Mode[], docker?: DockerInfo): Finding {
  const base = { id: 'seat-capacity', title: `Room for ${seats} workshop seat${seats === 1 ? '' : 's'}` };
  const need = seatNeed(seats, modes);
  const vm = system.platform !== 'linux' || docker?.desktop;
  const haveBytes = vm ? (docker?.memTotal ?? 0) : system.memAvailableBytes();
  const haveCpus = system.cpuCount?.() ?? 0;
  const what = `${seats} seat${seats === 1 ? '' : 's'} with ${modes.length === 1 ? `one ${modes[0]} cluster` : `${modes.join(', ')} clusters`} each`;
  if (!haveBytes || !haveCpus)
    return {
      ...base,
      status: 'warn',
      detail: `Could not tell this host's memory or CPUs; ${what} need about ${fmt(need.memoryBytes)} and ${need.cpus} CPUs.`,
    };
  const detail = `${what} need about ${fmt(need.memoryBytes)} and ${need.cpus} CPUs; ${vm ? 'the Docker VM has' : 'this host has'} ${fmt(haveBytes)} available and ${haveCpus} CPUs.`;
  const fits = seatsThatFit(haveBytes, haveCpus, modes);
  if (fits >= seats) return { ...base, status: 'ok', detail };
  const fix = `Run at most ${fits} seat${fits === 1 ? '' : 's'} here (\`dplab portal --max-seats ${Math.max(1, fits)}\`), warm fewer modes, use a bigger VM, or the Kubernetes seat backend, which spreads seats over a cluster's nodes.`;
  // Memory is a hard wall (the OOM killer); short of CPUs everything is only slower.
  const memoryShort = haveBytes < need.memoryBytes / 2;
  return { ...base, status: memoryShort ? 'fail' : 'warn', detail, fix };
}
