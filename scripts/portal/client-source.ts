/**
 * Who a request comes from, for the portal's limits that count per client (wrong tokens, wrong
 * codes, seats taken): never one budget for everyone, so one client's failures never hold
 * another's right token or code (issue 36).
 *
 * A client is its address; behind a TLS terminator, the address the terminator appended last to
 * X-Forwarded-For (the one value it vouches for). On this host's loopback every client has the
 * same address, so the kernel tells them apart: the Unix user that owns the client's end of the
 * TCP connection (Linux /proc/net/tcp), which makes a workshop seat's shell (a seat user of its
 * own, seat-users.ts) a client of its own.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { isLoopback } from '../server/http.ts';

export interface ClientSource {
  /** The key the limits count by. */
  key: string;
  /** The Unix user of a loopback client, when the kernel says (Linux). */
  uid?: number;
}

/** `127.0.0.1` → `0100007F`, as /proc/net/tcp writes an IPv4 address. */
function procAddress(ip: string, port: number): string | null {
  const parts = ip.replace(/^::ffff:/, '').split('.');
  if (parts.length !== 4) return null;
  const hex = parts
    .reverse()
    .map((p) => Number(p).toString(16).padStart(2, '0'))
    .join('')
    .toUpperCase();
  return `${hex}:${port.toString(16).padStart(4, '0').toUpperCase()}`;
}

/** The uid owning the local end `ip:port` of a TCP connection on this host, or undefined. */
function socketOwner(ip: string, port: number): number | undefined {
  const local = procAddress(ip, port);
  if (!local) return undefined;
  let table: string;
  try {
    table = readFileSync('/proc/net/tcp', 'utf8');
  } catch {
    return undefined;
  }
  for (const line of table.split('\n')) {
    const f = line.trim().split(/\s+/);
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid …
    if (f[1] === local) return Number(f[7]);
  }
  return undefined;
}

export function clientSource(req: IncomingMessage, behindTls: boolean): ClientSource {
  const address = req.socket.remoteAddress ?? '';
  if (behindTls) {
    const forwarded = req.headers['x-forwarded-for'];
    const last = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? '')).split(',').pop()?.trim();
    if (last) return { key: `net:${last}` };
  }
  if (isLoopback(address.replace(/^::ffff:/, ''))) {
    const uid = req.socket.remotePort !== undefined ? socketOwner(address, req.socket.remotePort) : undefined;
    if (uid !== undefined) return { key: `uid:${uid}`, uid };
  }
  return { key: `net:${address}` };
}
