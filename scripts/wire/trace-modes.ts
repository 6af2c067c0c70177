/**
 * Which modes a request can be traced in, and how (scripts/dataplane/trace/methods.ts holds the
 * methods themselves, and its test holds the two to the same list); for the others, why not yet,
 * in the words the explorer shows instead of a Trace button. Plain data, no zod.
 */
import type { Mode } from './modes.ts';
import type { TraceMethodId } from './trace.ts';

export const TRACE_METHOD_OF: Readonly<Partial<Record<Mode, TraceMethodId>>> = {
  iptables: 'xtables-monitor',
  nftables: 'nft-monitor',
  cilium: 'cilium-monitor',
};

/** What the learner reads where a mode has no trace yet: what picks the backend there, and what to use meanwhile. */
export const NO_TRACE_BECAUSE: Readonly<Partial<Record<Mode, string>>> = {
  ipvs: 'IPVS picks the backend inside the kernel’s ip_vs module, not by walking rules, so a netfilter trace would not show the choice. Meanwhile `ipvsadm -Lnc` on the node lists the connections IPVS made and where each went.',
};
