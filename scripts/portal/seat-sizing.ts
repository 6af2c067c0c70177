/**
 * What one Kubernetes seat asks of its node: the one sizing table the seat pod, the operator's
 * guide and the capacity arithmetic read. A seat runs one kind cluster at a time by default (a
 * learner works in one mode); each warm mode adds a cluster's worth to the Docker-in-Docker
 * sidecar, where the kind nodes live.
 */
import { SEAT_CLUSTER_MEMORY_BYTES } from '../base/versions.ts';

interface ContainerResources {
  requests: { cpu: string; memory: string };
  limits: { cpu: string; memory: string };
}

export interface SeatSizing {
  /** `dplab serve`: the HTTP API, terminals (node-pty shells), checks. */
  runner: ContainerResources;
  /** dockerd and every kind node container of the seat's clusters. */
  dind: ContainerResources;
  /**
   * emptyDir for /var/lib/docker: the node image once, and per cluster each node's /var, which
   * kind gives a volume that Docker fills with a copy of the image's /var (its preloaded images).
   */
  dockerStorage: string;
  /** Memory-backed /dev/shm of the sidecar (Docker's default 64 MiB is too small for etcd in kind). */
  shm: string;
}

const MiB = 1024 ** 2;
const mi = (bytes: number) => `${Math.ceil(bytes / MiB)}Mi`;

/**
 * `clusters`: how many kind clusters the seat may run at once (≥ 1). Memory: 3 GiB per cluster
 * (SEAT_CLUSTER_MEMORY_BYTES, above the largest cluster measured in any mode) is the request,
 * the limit one and a half times it, so a busy lab step is not OOM-killed at the floor.
 */
export function seatSizing(clusters = 1): SeatSizing {
  const n = Math.max(1, Math.floor(clusters));
  return {
    runner: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } },
    dind: {
      requests: { cpu: `${n}`, memory: mi(n * SEAT_CLUSTER_MEMORY_BYTES) },
      limits: { cpu: `${2 * n}`, memory: mi(n * SEAT_CLUSTER_MEMORY_BYTES * 1.5) },
    },
    // Measured in a seat (test/kind/portal.kind.test.ts): a three-node cluster with its node
    // image took 10.8 GB (image 2.4 GB, each node's /var 2.8 GB), past a 10Gi limit, and the
    // kubelet evicted the seat mid-Start. 4 GiB for the image, 12 per cluster.
    dockerStorage: `${4 + 12 * n}Gi`,
    shm: '1Gi',
  };
}

const milli = (cpu: string) => (cpu.endsWith('m') ? Number(cpu.slice(0, -1)) : Number(cpu) * 1000);
const mebi = (mem: string) => (mem.endsWith('Gi') ? Number(mem.slice(0, -2)) * 1024 : Number(mem.replace(/Mi$/, '')));

/** One seat pod's whole ask (both containers; /dev/shm counts inside the sidecar's memory): what a node must have free. */
export function seatTotals(s: SeatSizing): {
  cpuRequestMilli: number;
  cpuLimitMilli: number;
  memoryRequestMi: number;
  memoryLimitMi: number;
} {
  const both = [s.runner, s.dind];
  const sum = (f: (c: ContainerResources) => number) => both.reduce((n, c) => n + f(c), 0);
  return {
    cpuRequestMilli: sum((c) => milli(c.requests.cpu)),
    cpuLimitMilli: sum((c) => milli(c.limits.cpu)),
    memoryRequestMi: sum((c) => mebi(c.requests.memory)),
    memoryLimitMi: sum((c) => mebi(c.limits.memory)),
  };
}
