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

/** "10.96.0.10:53" or "10.96.0.10:53/TCP" → parts, or null when it is not one. */
export function splitIpPort(s: string): { ip: string; port: number; protocol: Protocol | null } | null {
  const m = /^(\d+\.\d+\.\d+\.\d+):(\d+)(?:\/([A-Za-z]+))?$/.exec(s);
  if (!m || !isIpv4(m[1])) return null;
  const port = parsePort(m[2]);
  if (port === null) return null;
  const protocol = m[3] === undefined ? null : toProtocol(m[3]);
  if (m[3] !== undefined && protocol === null) return null;
  return { ip: m[1], port, protocol };
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

export function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

export function inCidr(ip: string, cidr: string): boolean {
  const [base, bitsText] = cidr.split('/');
  const bits = Number(bitsText ?? '32');
  if (!isIpv4(ip) || !isIpv4(base) || !(bits >= 0 && bits <= 32)) return false;
  const size = 2 ** (32 - bits);
  return Math.floor(ipv4ToInt(ip) / size) === Math.floor(ipv4ToInt(base) / size);
}

/** "default/web:http" → service + port name; "default/web" → port name null. */
export function splitServicePortName(s: string): { service: string; portName: string | null } | null {
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)(?::([-a-z0-9]+))?$/.exec(s);
  if (!m) return null;
  return { service: `${m[1]}/${m[3]}`, portName: m[5] ?? null };
}
