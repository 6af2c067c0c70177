// Which trace method each mode's nodes use; IPVS comes later (issue 40).
import type { Mode } from '../../catalogue/modes.ts';
import { ciliumTrace } from './cilium-method.ts';
import { iptablesTrace } from './iptables-method.ts';
import type { TraceMethod } from './method.ts';
import { nftTrace } from './nft-method.ts';

export const TRACE_METHOD: Readonly<Partial<Record<Mode, TraceMethod>>> = {
  iptables: iptablesTrace,
  nftables: nftTrace,
  cilium: ciliumTrace,
};
