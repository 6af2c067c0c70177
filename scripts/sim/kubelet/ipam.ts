/**
 * Pod addresses from the node's pod CIDR, host-local style: the first address is the network,
 * the second the gateway every pod routes through (it sits on the node side of each veth), the
 * last the broadcast; the rest go to pods, lowest free first. Pure: the caller says what is used.
 */
import { DplabError } from '../../base/errors.ts';

export interface Cidr {
  /** Network address as a 32-bit unsigned number. */
  base: number;
  prefix: number;
}

function ipToNumber(ip: string): number {
  const parts = ip.split('.');
  if (parts.length !== 4) throw new DplabError(`not an IPv4 address: ${ip}`);
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) throw new DplabError(`not an IPv4 address: ${ip}`);
    n = n * 256 + Number(p);
  }
  return n;
}

function numberToIp(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

export function parseCidr(text: string): Cidr {
  const m = /^([\d.]+)\/(\d{1,2})$/.exec(text.trim());
  if (!m || Number(m[2]) > 32) throw new DplabError(`not an IPv4 CIDR: ${text}`);
  const prefix = Number(m[2]);
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return { base: (ipToNumber(m[1]) & mask) >>> 0, prefix };
}

function cidrSize(c: Cidr): number {
  return 2 ** (32 - c.prefix);
}

export function cidrContains(c: Cidr, ip: string): boolean {
  const n = ipToNumber(ip);
  return n >= c.base && n < c.base + cidrSize(c);
}

/** The gateway pods route through: the subnet's first usable address (kindnet/ptp's choice). */
export function gatewayOf(podCidr: string): string {
  const c = parseCidr(podCidr);
  if (c.prefix > 29) throw new DplabError(`pod CIDR ${podCidr} is too small for pods (need /29 or larger)`);
  return numberToIp(c.base + 1);
}

/** The lowest free pod address in the CIDR, or a clear error when it is full. */
export function allocateAddress(podCidr: string, used: Iterable<string>): string {
  const c = parseCidr(podCidr);
  const gateway = ipToNumber(gatewayOf(podCidr));
  const taken = new Set<number>();
  for (const ip of used) taken.add(ipToNumber(ip));
  const last = c.base + cidrSize(c) - 1;
  for (let n = c.base + 1; n < last; n++) {
    if (n === gateway || taken.has(n)) continue;
    return numberToIp(n);
  }
  throw new DplabError(`no free pod address left in ${podCidr} (${taken.size} in use)`);
}
