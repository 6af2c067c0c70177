/**
 * Versions the labs were written and recorded against. One place, so the kind configs, the
 * preflight and the README agree.
 */

/** The kind release whose node image we pin (its release notes list the digest below). */
export const KIND_VERSION = '0.31.0';
/** The Kubernetes release the labs run (the node image's tag). */
export const KUBERNETES_VERSION = '1.35.0';
/** Node image of kind v0.31.0 for Kubernetes 1.35.0; the kind configs pin the same string. */
export const NODE_IMAGE = `kindest/node:v${KUBERNETES_VERSION}@sha256:452d707d4862f52530247495d180205e029056831160e22870e37e3f6c1ac31f`;

/**
 * The simulated cluster (`--provider sim`) builds the same Kubernetes release's components
 * (kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy) from the
 * k8s.io/kubernetes module at v{KUBERNETES_VERSION}, and the etcd and CoreDNS that release
 * pins: kubeadm's `DefaultEtcdVersion = "3.6.6-0"` and `CoreDNSVersion = "v1.13.1"` in
 * cmd/kubeadm/app/constants/constants.go of k8s.io/kubernetes v1.35.0 (build/dependencies.yaml
 * lists the same: etcd 3.6.6, coredns-kubeadm 1.13.1).
 */
export const SIM_ETCD_VERSION = '3.6.6';
export const SIM_COREDNS_VERSION = '1.13.1';
/** The agnhost the labs' manifests name (`registry.k8s.io/e2e-test-images/agnhost:<this>`). */
export const AGNHOST_VERSION = '2.53';

/** `kubeProxyMode: nftables` arrived in kind 0.23; nftables mode is beta from Kubernetes 1.31. */
export const MIN_KIND_FOR_NFTABLES = '0.23.0';
export const MIN_KUBERNETES_FOR_NFTABLES = '1.31.0';
/** Older kind releases cannot run the pinned node image reliably; warn below this. */
export const MIN_KIND_RECOMMENDED = '0.31.0';

/**
 * Cilium 1.19, the current stable line, because its Kubernetes compatibility page
 * (Documentation/network/kubernetes/compatibility.rst, as released in 1.19.3) lists
 * Kubernetes 1.32, 1.33, 1.34 and 1.35 as e2e tested, and 1.35 is the Kubernetes we pin
 * (1.18's page stops at 1.33). Cilium keeps a release line's tested Kubernetes versions for
 * its whole maintenance period, so the list holds for every 1.19 patch. 1.19.4 is the newest
 * patch the stable upgrade guide names (`helm template cilium/cilium --version 1.19.4`).
 * `cilium-dbg service list` prints `ID  Frontend  Service Type  Backend` (cilium-dbg/cmd/
 * service_list.go; recorded from 1.19.4 on kind in scripts/dataplane/fixtures/cilium/), which is
 * what scripts/dataplane/cilium.ts reads.
 */
export const CILIUM_VERSION = '1.19.4';
export const CILIUM_HELM_REPO = 'https://helm.cilium.io';
/** The helm a workshop seat's image carries (scripts/portal/image/Dockerfile): Cilium's installer there, as no cilium CLI is in it. */
export const HELM_VERSION = '3.19.0';

/** Compare dotted versions ("0.23.0" vs "0.31"); missing parts count as 0. */
export function compareVersions(a: string, b: string): number {
  const pa = a
    .replace(/^v/, '')
    .split(/[.+-]/)
    .map((p) => Number.parseInt(p, 10) || 0);
  const pb = b
    .replace(/^v/, '')
    .split(/[.+-]/)
    .map((p) => Number.parseInt(p, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length, 3); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/** "kind v0.20.0 go1.20.4 linux/amd64" → "0.20.0"; null when the text holds no version. */
export function parseKindVersion(text: string): string | null {
  return /\bv?(\d+\.\d+\.\d+)/.exec(text)?.[1] ?? null;
}

/** The Kubernetes version a node image tag names: "kindest/node:v1.35.0@sha256:…" → "1.35.0". */
export function nodeImageKubernetesVersion(image: string): string | null {
  return /:v(\d+\.\d+\.\d+)/.exec(image)?.[1] ?? null;
}

/**
 * What one lab cluster (kind: a control plane and two workers) asks of its host, per dataplane:
 * the figures `dplab doctor` budgets with (one cluster; `--seats N` multiplies them). Each mode's
 * record (scripts/catalogue/modes.ts, `footprint`) names its budget; CLUSTER_FOOTPRINT there is
 * the per-mode table.
 * - memory, measured by `test/bench/kind-cluster.ts` and `docker stats` on the kind test
 *   environment (kind v0.31.0, the node image built there, Kubernetes v1.35.0, Cilium 1.19.4,
 *   2 cores, 2026-12-05), the three node containers summed:
 *   | mode | right after `dplab up` and a lab's Checks and Resets | with scale-compare's 1,000 Services |
 *   | iptables | 1,047 MiB (kind alone: 734) | 1,139 MiB (control plane 712) |
 *   | nftables | 893 MiB (kind alone: 766) | 1,057 MiB (control plane 690) |
 *   | Cilium | 2,215 MiB (kind alone, no CNI: 502) | 2,762 MiB (control plane 1,327; agents ~700 each) |
 *   IPVS is not measured on kind (its guest under emulation did not keep a cluster); it runs
 *   the same components as iptables. We budget the peak with room for a learner's own
 *   workloads: 2 GiB for the kube-proxy modes (1.8× the peak) and 4 GiB for Cilium (1.5×).
 * - CPU: kubeadm, which kind runs inside its nodes, documents "2 CPUs or more" for a
 *   control-plane machine ("Installing kubeadm", Before you begin); kind's nodes share the
 *   host's cores and do not enforce it, but a control plane with less starts slowly. Idle, the
 *   control plane used ~20 % of a core and each worker ~1 % (same measurement); Cilium's agents
 *   add about one more core between them while they compile their BPF programs.
 */
export const CLUSTER_BUDGETS = {
  kubeProxy: { memoryBytes: 2 * 1024 ** 3, cpus: 2 },
  cilium: { memoryBytes: 4 * 1024 ** 3, cpus: 3 },
} as const;

/**
 * What a workshop seat's Docker-in-Docker sidecar asks per kind cluster: a seat may run any mode,
 * so the largest peak measured above (Cilium with 1,000 Services, 2.7 GiB) rounded up; the
 * sidecar's limit is half as much again (scripts/portal/seat-sizing.ts).
 */
export const SEAT_CLUSTER_MEMORY_BYTES = 3 * 1024 ** 3;

/**
 * A workshop seat's own runner (`dplab serve` on Node, with a shell or two): measured by
 * `dplab bench portal-seats` at about 120 MiB resident per seat; we budget 200 MiB.
 */
export const SEAT_RUNNER_MEMORY_BYTES = 200 * 1024 ** 2;
