// Address, port and name helpers shared by every parser.
import type { Protocol } from './model.ts';

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
const MAX_PORT = 65535;

export function isIpv4(s: string): boolean {
  return IPV4.test(s);
}

export function parsePort(s: string): number | null {
  if (!/^\d{1,5}$/.test(s)) return null;
  const n = Number(s);
  return n <= MAX_PORT ? n : null;
}

/**
 * An IPv6 address in its RFC 5952 text form ("fd00:10::1"), or null. Accepts any valid form,
 * including the kernel's full one ("fd00:0010:0000:0000:0000:0000:0000:0001", as /proc prints it).
 */
export function normaliseIpv6(s: string): string | null {
  if (!/^[0-9A-Fa-f:]+$/.test(s) || !s.includes(':')) return null;
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const parse = (h: string) => (h === '' ? [] : h.split(':'));
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  if ([...head, ...tail].some((g) => !/^[0-9A-Fa-f]{1,4}$/.test(g))) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill('0'), ...tail].map((g) => parseInt(g, 16).toString(16));
  // The longest run of two or more zero groups becomes "::" (the first, on a tie).
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.len && j - i >= 2) best = { at: i, len: j - i };
    i = j;
  }
  if (best.at < 0) return groups.join(':');
  return `${groups.slice(0, best.at).join(':')}::${groups.slice(best.at + best.len).join(':')}`;
}

/** "10.96.0.10:53", "10.96.0.10:53/TCP" or "[fd00:10::1]:53" → parts, or null when it is not one. */
export function splitIpPort(s: string): { ip: string; port: number; protocol: Protocol | null } | null {
  const v6 = /^\[([0-9A-Fa-f:]+)\]:(\d+)(?:\/([A-Za-z]+))?$/.exec(s);
  if (v6) {
    const ip = normaliseIpv6(v6[1]);
    const port = parsePort(v6[2]);
    const protocol = v6[3] === undefined ? null : toProtocol(v6[3]);
    if (!ip || port === null || (v6[3] !== undefined && protocol === null)) return null;
    return { ip, port, protocol };
  }
  const m = /^(\d+\.\d+\.\d+\.\d+):(\d+)(?:\/([A-Za-z]+))?$/.exec(s);
  if (!m || !isIpv4(m[1])) return null;
  const port = parsePort(m[2]);
  if (port === null) return null;
  const protocol = m[3] === undefined ? null : toProtocol(m[3]);
  if (m[3] !== undefined && protocol === null) return null;
  return { ip: m[1], port, protocol };
}

/** "10.96.0.1:443", "[fd00:10:96::1]:443": an address and port as the tools print them. */
export function hostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** "/32" is implied by iptables-save for single addresses. */
export function stripHostMask(s: string): string {
  return s.endsWith('/32') ? s.slice(0, -3) : s;
}

export function toProtocol(s: string): Protocol | null {
  const up = s.toUpperCase();
  return up === 'TCP' || up === 'UDP' || up === 'SCTP' ? up : null;
}

/** /proc/net/ip_vs prints addresses as 8 hex digits in host order after ntohl: 0A600001 = 10.96.0.1. */
export function hexToIpv4(hex: string): string | null {
  if (!/^[0-9A-Fa-f]{8}$/.test(hex)) return null;
  const n = parseInt(hex, 16);
  return [24, 16, 8, 0].map((shift) => (n >>> shift) & 0xff).join('.');
}

export function hexToPort(hex: string): number | null {
  if (!/^[0-9A-Fa-f]{4}$/.test(hex)) return null;
  return parseInt(hex, 16);
}

function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

export function inCidr(ip: string, cidr: string): boolean {
  const [base, bitsText] = cidr.split('/');
  if (ip.includes(':') || base.includes(':')) return inCidr6(ip, base, Number(bitsText ?? '128'));
  const bits = Number(bitsText ?? '32');
  if (!isIpv4(ip) || !isIpv4(base) || !(bits >= 0 && bits <= 32)) return false;
  const size = 2 ** (32 - bits);
  return Math.floor(ipv4ToInt(ip) / size) === Math.floor(ipv4ToInt(base) / size);
}

function ipv6ToBigInt(ip: string): bigint | null {
  const full = normaliseIpv6(ip);
  if (!full) return null;
  const [head, tail = null] = full.split('::');
  const parts = (h: string) => (h === '' ? [] : h.split(':'));
  const groups =
    tail === null ? parts(head) : [...parts(head), ...Array(8 - parts(head).length - parts(tail).length).fill('0'), ...parts(tail)];
  return groups.reduce((acc, g) => (acc << 16n) + BigInt(parseInt(g, 16)), 0n);
}

function inCidr6(ip: string, base: string, bits: number): boolean {
  const a = ipv6ToBigInt(ip);
  const b = ipv6ToBigInt(base);
  if (a === null || b === null || !(bits >= 0 && bits <= 128)) return false;
  const shift = BigInt(128 - bits);
  return a >> shift === b >> shift;
}

/** "10.96.0.0/16" or "fd00:10:96::/112". */
export function isCidr(c: string): boolean {
  const [ip, bits, extra] = c.split('/');
  if (extra !== undefined || !/^\d{1,3}$/.test(bits ?? '')) return false;
  if (isIpv4(ip ?? '')) return Number(bits) <= 32;
  return normaliseIpv6(ip ?? '') !== null && Number(bits) <= 128;
}

/** "default/web:http" → service + port name; "default/web" → port name null. */
export function splitServicePortName(s: string): { service: string; portName: string | null } | null {
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)(?::([-a-z0-9]+))?$/.exec(s);
  if (!m) return null;
  return { service: `${m[1]}/${m[3]}`, portName: m[5] ?? null };
}
