/**
 * The dataplane modes, as the wire names them, and who implements Services on each mode's nodes.
 * scripts/catalogue/modes.ts holds each mode's whole record (and its type holds the record's
 * dataplane kind to the one here); mode-schema.ts is their zod schema. Plain data, no zod: what
 * needs only the names (`dplab help`, the browser's mode check) loads no schema library.
 */
export const MODES = ['iptables', 'ipvs', 'nftables', 'cilium'] as const;
export type Mode = (typeof MODES)[number];

export function isMode(value: unknown): value is Mode {
  return typeof value === 'string' && (MODES as readonly string[]).includes(value);
}

/** `kube-proxy`: kube-proxy in one of its proxy modes; `agent`: an agent that replaces kube-proxy. */
export type DataplaneKind = 'kube-proxy' | 'agent';

/** The browser's view of each mode's dataplane (it reads no catalogue); a mode without one does not compile. */
export const DATAPLANE_KINDS = {
  iptables: 'kube-proxy',
  ipvs: 'kube-proxy',
  nftables: 'kube-proxy',
  cilium: 'agent',
} as const satisfies Record<Mode, DataplaneKind>;

/** True for a course mode whose nodes run no kube-proxy; false for the others and for a name that is no mode. */
export function replacesKubeProxy(mode: string): boolean {
  return isMode(mode) && DATAPLANE_KINDS[mode] === 'agent';
}
