/**
 * The dataplane modes, as the wire names them. scripts/catalogue/modes.ts adds what each one is;
 * mode-schema.ts is their zod schema. Plain data, no zod: what needs only the names (`dplab
 * help`, the browser's mode check) loads no schema library.
 */
export const MODES = ['iptables', 'ipvs', 'nftables', 'cilium'] as const;
export type Mode = (typeof MODES)[number];

export function isMode(value: unknown): value is Mode {
  return typeof value === 'string' && (MODES as readonly string[]).includes(value);
}
