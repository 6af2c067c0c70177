/**
 * The dataplane modes the course runs, one record each: what kind of dataplane the mode is, its
 * labels, its subnets, how its node's rules are read, and what it needs of the host.
 * Every per-mode table (RULE_DUMPS, ENTRY_COUNTS, the provisioning steps, the preflight's needs)
 * derives from these records; code asks a record, never a mode's name. The kind config is
 * `kind-configs/<mode>.yaml`. ARCHITECTURE.md, "A mode", lists what adding one takes.
 */
import { join } from 'node:path';
import { kindConfigDir, stateDir } from '../base/paths.ts';
import { DplabError } from '../base/errors.ts';
import { CILIUM_VERSION, CLUSTER_BUDGETS, MIN_KIND_FOR_NFTABLES, MIN_KUBERNETES_FOR_NFTABLES } from '../base/versions.ts';
import { isSeatId } from '../wire/seat.ts';
import type { Format } from '../wire/formats.ts';

import { DATAPLANE_KINDS, isMode, MODES, type DataplaneKind, type Mode } from '../wire/modes.ts';

export { isMode, MODES, type Mode };

/** What kube-proxy's /proxyMode answers on a node. */
export type ProxyMode = 'iptables' | 'ipvs' | 'nftables';

/** An agent that replaces kube-proxy (runs as a DaemonSet, keeps each node's Services in its own tables). */
export interface Agent {
  /** The agent's name as the runner reports it (the cluster status' dataplane); code about one agent compares the record, not this. */
  id: string;
  /** Its name in a sentence ("Cilium"). */
  name: string;
  /** The namespace of its DaemonSet. */
  namespace: string;
  /** Its DaemonSet: `ds/<daemonSet>` reaches any of its pods. */
  daemonSet: string;
  /** The label selector of its pods (one per node). */
  podLabel: string;
  /** The container in each pod that holds its command-line tool. */
  container: string;
  /** The command in that container whose output says whether it replaces kube-proxy. */
  status: readonly string[];
}

/** Kernel modules a dataplane loads on the host; the preflight's finding about them is worded from these fields. */
interface KernelModules {
  /** What they build, in a word ("IPVS"): the finding "<what> kernel modules" (id `<what>-modules`), "a host kernel built with <what>". */
  what: string;
  /** The modules, the core first (the fixes name it: "a Docker VM whose kernel has ip_vs"). */
  names: readonly string[];
  /** The kernel option that builds them (CONFIG_IP_VS). */
  config: string;
  /** What the dataplane logs when the kernel lacks them. */
  missingLog: string;
  /** The Kubernetes release from which the dataplane loads them itself when it starts, so modules not loaded yet are only a warning. */
  selfLoadedSince: string;
}

/**
 * What a mode's dataplane asks of the host beyond Docker, kind and kubectl (kind nodes share the
 * Docker host's kernel); the preflight (scripts/preflight/) reads nothing else about a mode. Every
 * field is required: `null` (or `false`) says the mode asks nothing of that kind.
 */
export interface HostNeeds {
  /** Who asks, as the findings say it: "kube-proxy's nftables mode", "Cilium 1.19.4". */
  who: string;
  /** The oldest host kernel release it runs on. */
  minKernel: string | null;
  /** The kernel modules it loads. */
  kernelModules: KernelModules | null;
  /** Whether it needs cgroup v2 and a private cgroup namespace per node (Cilium's socket load balancer: the finding's words are its). */
  cgroupV2: boolean;
  /** The oldest kind whose kind config takes the mode. */
  minKind: string | null;
  /** The oldest Kubernetes that has it (the pinned node image's is checked). */
  minKubernetes: string | null;
}

type Dataplane = { kind: 'kube-proxy'; proxyMode: ProxyMode } | { kind: 'agent'; agent: Agent };

/** The dataplane of one kind. */
export type DataplaneOf<K extends DataplaneKind> = Extract<Dataplane, { kind: K }>;

/** How a mode's rules are read on a node: inside the node for kube-proxy, in the node's agent pod for an agent. */
interface RuleRead {
  /** The format of the node's whole dump (its command is the format's, in scripts/dataplane/read-commands.ts). */
  format: Format;
  /** The scale lab's one headline count (keep in step with labs/scale-compare/manifests/count.sh). */
  count: {
    /** What the number counts, in the learner's words. */
    what: string;
    command: readonly string[];
  };
}

/** One mode; MODE_INFO ties its dataplane to the kind the wire gives the browser (scripts/wire/modes.ts). */
export interface ModeRecord<M extends string = Mode, D extends Dataplane = Dataplane> {
  id: M;
  /** Human title for the UI. */
  title: string;
  /** A word for where the title does not fit (the mode picker on a phone); the title stays its accessible name. */
  short: string;
  /** Who implements Services on the nodes. */
  dataplane: D;
  /** Pod and Service subnets, distinct per mode so several clusters can run at once. */
  podSubnet: string;
  serviceSubnet: string;
  rules: RuleRead;
  /** What one cluster of it asks of the host (a budget of CLUSTER_BUDGETS, which says where the figures come from). */
  footprint: { memoryBytes: number; cpus: number };
  /** What its dataplane asks of the host's kernel and tools (the preflight's per-mode checks). */
  host: HostNeeds;
}

/** Cilium as kube-proxy replacement (its Helm chart's names). */
export const CILIUM: Agent = {
  id: 'cilium',
  name: 'Cilium',
  namespace: 'kube-system',
  daemonSet: 'cilium',
  podLabel: 'k8s-app=cilium',
  container: 'cilium-agent',
  status: ['cilium-dbg', 'status'],
};

/** Every mode's record; a mode missing here, or with a dataplane of another kind than the wire's, does not compile. */
export const MODE_INFO: { readonly [M in Mode]: ModeRecord<M, DataplaneOf<(typeof DATAPLANE_KINDS)[M]>> } = {
  iptables: {
    id: 'iptables',
    title: 'kube-proxy, iptables mode',
    short: 'iptables',
    dataplane: { kind: 'kube-proxy', proxyMode: 'iptables' },
    podSubnet: '10.244.0.0/16',
    serviceSubnet: '10.96.0.0/16',
    footprint: CLUSTER_BUDGETS.kubeProxy,
    host: { who: "kube-proxy's iptables mode", minKernel: null, kernelModules: null, cgroupV2: false, minKind: null, minKubernetes: null },
    rules: {
      format: 'iptables-save',
      count: { what: 'KUBE-* rules in iptables-save', command: ['sh', '-c', "iptables-save | grep -c '^-A KUBE-'"] },
    },
  },
  ipvs: {
    id: 'ipvs',
    title: 'kube-proxy, IPVS mode',
    short: 'IPVS',
    dataplane: { kind: 'kube-proxy', proxyMode: 'ipvs' },
    podSubnet: '10.245.0.0/16',
    serviceSubnet: '10.97.0.0/16',
    // Not measured on kind (its guest under emulation did not keep a cluster): the same components as iptables.
    footprint: CLUSTER_BUDGETS.kubeProxy,
    host: {
      who: "kube-proxy's IPVS mode",
      minKernel: null,
      // The core, the schedulers the labs use (ipvs-inspect switches to lc), and conntrack.
      kernelModules: {
        what: 'IPVS',
        names: ['ip_vs', 'ip_vs_rr', 'ip_vs_wrr', 'ip_vs_sh', 'ip_vs_lc', 'nf_conntrack'],
        config: 'CONFIG_IP_VS',
        missingLog: "can't use the IPVS proxier",
        selfLoadedSince: '1.27',
      },
      cgroupV2: false,
      minKind: null,
      minKubernetes: null,
    },
    rules: {
      // kind nodes ship no ipvsadm; /proc/net/ip_vs needs nothing installed.
      format: 'proc-ip-vs',
      // Not /proc/net/ip_vs: read past its first 4 KiB, on a kernel whose other network namespaces
      // (the other kind nodes) also hold virtual servers, it stops early (105 virtual servers printed
      // 38 on the guest's 6.1 kernel). kube-proxy binds each ClusterIP to kube-ipvs0, once per address.
      count: {
        what: 'Service addresses bound to kube-ipvs0',
        command: ['sh', '-c', "a=$(ip -4 -o addr show dev kube-ipvs0) && printf '%s\\n' \"$a\" | grep -c ' inet '"],
      },
    },
  },
  nftables: {
    id: 'nftables',
    title: 'kube-proxy, nftables mode',
    short: 'nftables',
    dataplane: { kind: 'kube-proxy', proxyMode: 'nftables' },
    podSubnet: '10.246.0.0/16',
    serviceSubnet: '10.98.0.0/16',
    footprint: CLUSTER_BUDGETS.kubeProxy,
    host: {
      who: "kube-proxy's nftables mode",
      // nftables features from this kernel on (Kubernetes docs, "nftables proxy mode").
      minKernel: '5.13',
      kernelModules: null,
      cgroupV2: false,
      minKind: MIN_KIND_FOR_NFTABLES,
      minKubernetes: MIN_KUBERNETES_FOR_NFTABLES,
    },
    rules: {
      format: 'nft-json',
      count: { what: 'lines of `nft list table ip kube-proxy`', command: ['sh', '-c', 'nft list table ip kube-proxy | wc -l'] },
    },
  },
  cilium: {
    id: 'cilium',
    title: 'Cilium kube-proxy replacement (eBPF)',
    short: 'Cilium eBPF',
    dataplane: { kind: 'agent', agent: CILIUM },
    podSubnet: '10.247.0.0/16',
    serviceSubnet: '10.99.0.0/16',
    footprint: CLUSTER_BUDGETS.cilium,
    // Cilium's minimum kernel since 1.18 (its system requirements; 1.19 keeps it).
    host: { who: `Cilium ${CILIUM_VERSION}`, minKernel: '5.10', kernelModules: null, cgroupV2: true, minKind: null, minKubernetes: null },
    rules: {
      format: 'cilium-json',
      count: { what: 'frontends in `cilium-dbg service list`', command: ['sh', '-c', "cilium-dbg service list | grep -cE '^[0-9]'"] },
    },
  },
};

/** The record of a mode, as the union of all records (switch on `dataplane.kind`). */
export const modeRecord = (mode: Mode): ModeRecord => MODE_INFO[mode];

/** A per-mode table derived from the records. */
export function perMode<T>(of: (record: ModeRecord) => T): Readonly<Record<Mode, T>> {
  return Object.fromEntries(MODES.map((m) => [m, of(MODE_INFO[m])])) as Record<Mode, T>;
}

/** What one cluster of each mode asks of its host. */
export const CLUSTER_FOOTPRINT = perMode((r) => r.footprint);

/** kube-proxy's mode on a mode's nodes, or null where an agent replaces kube-proxy. */
export function kubeProxyMode(mode: Mode): ProxyMode | null {
  const d = modeRecord(mode).dataplane;
  return d.kind === 'kube-proxy' ? d.proxyMode : null;
}

/** The agent that replaces kube-proxy on a mode's nodes, or null where kube-proxy runs. */
export function agentOf(mode: Mode): Agent | null {
  const d = modeRecord(mode).dataplane;
  return d.kind === 'agent' ? d.agent : null;
}

/** Whether `agent` replaces kube-proxy on the mode's nodes (code about one agent asks this, not the mode's name). */
export const runsAgent = (mode: Mode, agent: Agent): boolean => agentOf(mode) === agent;

/** What the cluster status names as a mode's dataplane: kube-proxy's mode, or the agent. */
export function dataplaneName(record: ModeRecord<string>): string {
  const d = record.dataplane;
  switch (d.kind) {
    case 'kube-proxy':
      return d.proxyMode;
    case 'agent':
      return d.agent.id;
    default:
      return unreachable(d);
  }
}

/** `kubectl` arguments that run `command` in any pod of the agent's DaemonSet. */
export function agentExec(agent: Agent, command: readonly string[]): string[] {
  return ['-n', agent.namespace, 'exec', `ds/${agent.daemonSet}`, '-c', agent.container, '--', ...command];
}

/** The end of an exhaustive switch: a kind added to a union without a case here does not compile. */
export function unreachable(value: never): never {
  throw new Error(`Unhandled case: ${JSON.stringify(value)}`);
}

/**
 * The workshop seat this runner serves (`DPLAB_SEAT`, set by the portal's seat backends), or
 * undefined on a learner's own machine. Seats on one Docker host must not share clusters.
 */
export function seatId(): string | undefined {
  const seat = process.env.DPLAB_SEAT;
  if (seat === undefined || seat === '') return undefined;
  if (!isSeatId(seat))
    throw new DplabError(`DPLAB_SEAT "${String(seat).slice(0, 40)}" is not a seat id.`, {
      fix: 'Use lower-case letters, digits and inner dashes, at most 20 characters (e.g. DPLAB_SEAT=s01), or leave it unset.',
    });
  return seat;
}

/** `dplab-<mode>`, or `dplab-<seat>-<mode>` inside a workshop seat; kubeconfigs, node names and Cilium's API host follow. */
export function clusterName(mode: Mode): string {
  const seat = seatId();
  return seat ? `dplab-${seat}-${mode}` : `dplab-${mode}`;
}

export function kindConfigPath(mode: Mode): string {
  return join(kindConfigDir, `${mode}.yaml`);
}

/** Each cluster's kubeconfig lives in the state folder; ~/.kube/config is never touched. */
export function kubeconfigPath(mode: Mode): string {
  return join(stateDir(), 'kube', `${clusterName(mode)}.yaml`);
}
