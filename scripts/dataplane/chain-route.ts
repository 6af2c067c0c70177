// What following kube-proxy's chains from a frontend gives (iptables and nftables alike), and the
// frontend it makes: with Local policy and no local endpoint, the chain ends with no final jump.
import type { Affinity, Backend, ExternalChain, Frontend, FrontendType, Protocol } from './model.ts';

export interface Resolved {
  backends: Backend[];
  affinity: Affinity | null;
  localOnly: boolean;
  /** The chains walked, in order; empty when nothing was reached. */
  path: string[];
  /** Sources a KUBE-FW- chain lets on (loadBalancerSourceRanges); iptables only, absent without a firewall chain. */
  sourceRanges?: string[];
  /** The external chain walked on the way, with its rules besides the final jump. */
  external?: ExternalChain;
}

/** How a parser's rules pick a backend: the random choice, and what picks before it under affinity. */
export interface Chooser {
  random: string;
  affinity: string;
}

export function frontendOf(
  chooser: Chooser,
  type: FrontendType,
  ip: string,
  port: number,
  protocol: Protocol,
  r: Resolved,
  prefix: string[],
): Frontend {
  // With Local policy kube-proxy leaves the external chain without a final jump when no endpoint is local.
  const localEmpty = r.localOnly && r.backends.length === 0 && r.path.length > 0;
  return {
    type,
    ip,
    port,
    protocol,
    backends: r.backends,
    localOnly: r.localOnly,
    dropsWithoutLocalEndpoints: localEmpty,
    affinity: r.affinity,
    noBackendVerdict: localEmpty ? 'drop' : null,
    path: [...prefix, ...r.path],
    chooser: r.affinity ? `${chooser.affinity}, then ${chooser.random}` : chooser.random,
    ...(r.sourceRanges ? { sourceRanges: r.sourceRanges } : {}),
    ...(r.external ? { external: r.external } : {}),
  };
}
