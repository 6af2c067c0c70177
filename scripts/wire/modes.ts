/** The dataplane modes, as the wire names them. scripts/clusters/modes.ts adds what each one is. */
import { z } from 'zod';

export const MODES = ['iptables', 'ipvs', 'nftables', 'cilium'] as const;
export type Mode = (typeof MODES)[number];

export const modeSchema = z.enum(MODES);

export function isMode(value: unknown): value is Mode {
  return typeof value === 'string' && (MODES as readonly string[]).includes(value);
}
