/**
 * The dataplane modes the course runs, as one registry. Everything that needs a cluster
 * name, a kind config or the proxy mode a node should report asks here.
 */
import { join } from 'node:path';
import { kindConfigDir, stateDir } from '../base/paths.ts';
import { DplabError } from '../base/errors.ts';
import { isSeatId } from '../wire/seat.ts';

import { isMode, MODES, type Mode } from '../wire/modes.ts';

export { isMode, MODES, type Mode };

export interface ModeInfo {
  id: Mode;
  /** Human title for the UI. */
  title: string;
  /** A word for where the title does not fit (the mode picker on a phone); the title stays its accessible name. */
  short: string;
  /** What kube-proxy's /proxyMode answers on a node; null when kube-proxy is not installed. */
  proxyMode: 'iptables' | 'ipvs' | 'nftables' | null;
  /** Pod and Service subnets, distinct per mode so several clusters can run at once. */
  podSubnet: string;
  serviceSubnet: string;
}

export const MODE_INFO: Readonly<Record<Mode, ModeInfo>> = {
  iptables: {
    id: 'iptables',
    title: 'kube-proxy, iptables mode',
    short: 'iptables',
    proxyMode: 'iptables',
    podSubnet: '10.244.0.0/16',
    serviceSubnet: '10.96.0.0/16',
  },
  ipvs: {
    id: 'ipvs',
    title: 'kube-proxy, IPVS mode',
    short: 'IPVS',
    proxyMode: 'ipvs',
    podSubnet: '10.245.0.0/16',
    serviceSubnet: '10.97.0.0/16',
  },
  nftables: {
    id: 'nftables',
    title: 'kube-proxy, nftables mode',
    short: 'nftables',
    proxyMode: 'nftables',
    podSubnet: '10.246.0.0/16',
    serviceSubnet: '10.98.0.0/16',
  },
  cilium: {
    id: 'cilium',
    title: 'Cilium kube-proxy replacement (eBPF)',
    short: 'Cilium eBPF',
    proxyMode: null,
    podSubnet: '10.247.0.0/16',
    serviceSubnet: '10.99.0.0/16',
  },
};

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
