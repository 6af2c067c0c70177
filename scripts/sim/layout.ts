/**
 * Where everything of a sim cluster lives, as pure data: the node network (a distinct /24 per
 * mode on its own bridge, so several sim clusters run side by side, away from 192.0.2.0/24),
 * node names and addresses like kind's, the pod and Service subnets of kind-configs/<mode>.yaml,
 * the cluster DNS address kubeadm would pick, and the state folder.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { DplabError } from '../base/errors.ts';
import { stateDir } from '../base/paths.ts';
import { clusterName, kindConfigPath, modeRecord, MODES, type Mode } from '../catalogue/modes.ts';

/** The dataplane modes the sim provider runs on any Linux kernel (Cilium needs its own agent and images). */
export const SIM_MODES = ['iptables', 'nftables'] as const satisfies readonly Mode[];
/** The sim provider also runs IPVS where the kernel has ip_vs (loaded or built in), as in the test environment's QEMU guest. */
export type SimMode = (typeof SIM_MODES)[number] | 'ipvs';

/** Does this kernel have IPVS now? `/proc/net/ip_vs` exists while the ip_vs module is loaded. */
export function kernelHasIpvs(): boolean {
  return existsSync('/proc/net/ip_vs');
}

/**
 * The kernel modules a kube-proxy mode needs beyond the sim's own (the mode record's
 * `host.kernelModules`: IPVS's), and whether this kernel has them now; null when it needs none or
 * is not kube-proxy's.
 */
function modulesNeeded(mode: Mode): { what: string; core: string; present: boolean } | null {
  const record = modeRecord(mode);
  const mods = record.host.kernelModules;
  if (record.dataplane.kind !== 'kube-proxy' || !mods) return null;
  // kernelHasIpvs is the reading of ip_vs, the one module set a mode needs today.
  return { what: mods.what, core: mods.names[0]!, present: kernelHasIpvs() };
}

export function isSimMode(mode: Mode): mode is SimMode {
  return (SIM_MODES as readonly Mode[]).includes(mode) || modulesNeeded(mode)?.present === true;
}

export function simUnsupported(mode: Mode): DplabError {
  const mods = modulesNeeded(mode);
  if (mods)
    return new DplabError(
      `The sim provider runs ${mods.what} only on a kernel with ${mods.core}, and this one has none (no /proc/net/${mods.core}).`,
      {
        fix: `Load it (\`modprobe ${mods.core}\`) where the kernel has the module; on these machines run the sim in the kind test environment's QEMU guest (\`npm run test:ipvs\`), or use \`--provider kind\` on a machine with Docker and ${mods.core}.`,
        status: 400,
      },
    );
  return new DplabError(`The sim provider runs the ${SIM_MODES.join(' and ')} modes (and IPVS on a kernel with ip_vs), not ${mode}.`, {
    fix: 'Cilium runs as its own agent from container images: use `--provider kind` on a machine with Docker.',
    status: 400,
  });
}

export interface SimNode {
  name: string;
  role: 'control-plane' | 'worker';
  ip: string;
  /** The host end of the node's veth on the bridge (≤ 15 characters). */
  hostVeth: string;
}

export interface SimLayout {
  mode: SimMode;
  name: string;
  bridge: string;
  /** The host's address on the bridge (kind's Docker network gateway). */
  gateway: string;
  prefixLength: 24;
  nodeSubnet: string;
  nodes: SimNode[];
  podSubnet: string;
  serviceSubnet: string;
  /** kube-dns' ClusterIP: the tenth address of the Service subnet, as kubeadm picks it. */
  dnsIp: string;
  clusterDomain: string;
  /** State folder: pidfiles, logs, PKI, etcd data, per-node configs. */
  dir: string;
}

/** networking.podSubnet / serviceSubnet of the mode's kind config: the one source of both. */
function kindSubnets(mode: Mode): { podSubnet: string; serviceSubnet: string } {
  const doc = parse(readFileSync(kindConfigPath(mode), 'utf8')) as { networking?: { podSubnet?: string; serviceSubnet?: string } };
  const n = doc.networking;
  if (!n?.podSubnet || !n.serviceSubnet) throw new DplabError(`${kindConfigPath(mode)} names no podSubnet/serviceSubnet.`);
  return { podSubnet: n.podSubnet, serviceSubnet: n.serviceSubnet };
}

function nthAddress(cidr: string, n: number): string {
  const p = cidr.split('/')[0].split('.').map(Number);
  const v = ((p[0] << 24) >>> 0) + (p[1] << 16) + (p[2] << 8) + p[3] + n;
  return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
}

export function simStateDir(mode: Mode): string {
  return join(stateDir(), 'sim', clusterName(mode));
}

export function simLayout(mode: Mode): SimLayout {
  if (!isSimMode(mode)) throw simUnsupported(mode);
  const idx = MODES.indexOf(mode) + 1;
  const nodeSubnet = `172.31.${idx}.0/24`;
  const name = clusterName(mode);
  const roles: SimNode['role'][] = ['control-plane', 'worker', 'worker'];
  const suffixes = ['control-plane', 'worker', 'worker2'];
  const nodes = roles.map((role, i) => ({
    name: `${name}-${suffixes[i]}`,
    role,
    ip: nthAddress(nodeSubnet, 2 + i),
    hostVeth: `dplab${idx}n${i}`,
  }));
  const { podSubnet, serviceSubnet } = kindSubnets(mode);
  return {
    mode,
    name,
    bridge: `dplab${idx}br`,
    gateway: nthAddress(nodeSubnet, 1),
    prefixLength: 24,
    nodeSubnet,
    nodes,
    podSubnet,
    serviceSubnet,
    dnsIp: nthAddress(serviceSubnet, 10),
    clusterDomain: 'cluster.local',
    dir: simStateDir(mode),
  };
}
