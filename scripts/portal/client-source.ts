/**
 * Who a request comes from, for the portal's limits that count per client (wrong tokens, wrong
 * codes, seats taken): never one budget for everyone, so one client's failures never hold
 * another's right token or code (issue 36).
 *
 * A client is its address; behind a TLS terminator, the address the terminator appended last to
 * X-Forwarded-For (the one value it vouches for). On this host's loopback every client has the
 * same address, so the kernel tells them apart: the Unix user that owns the client's end of the
 * TCP connection (Linux /proc/net/tcp), which makes a workshop seat's shell (a seat user of its
 * own, seat-users.ts) a client of its own. A loopback client whose owner cannot be told is the
 * loopback address, counted like any other: never taken for the portal's own user.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { isLoopback } from '../server/core/http-server.ts';

export interface ClientSource {
  /** The key the limits count by. */
  key: string;
  /** The Unix user of a loopback client, when the kernel says (Linux). */
  uid?: number;
}

/** The portal's own user on this host (the operator's browser, a script of theirs): not held to the seats one client may take. Only a uid the kernel gave counts as known. */
export function isOperator(source: ClientSource, ownUid: number | undefined = process.getuid?.()): boolean {
  return source.uid !== undefined && source.uid === ownUid;
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

/** How often the table is read again when the connection is not in it: the kernel prints it a
 * page at a time, so a table that changes between pages (connections opening and closing on a
 * busy host) can leave a line out of one read. */
const READS = 3;

/** `st` of a connection in use; a closed one waiting out TIME_WAIT is `06`, and prints uid 0. */
const ESTABLISHED = '01';

const readTcpTable = () => readFileSync('/proc/net/tcp', 'utf8');

/** The uid owning the local end `ip:port` of a TCP connection on this host, or undefined. */
export function socketOwner(ip: string, port: number, read: () => string = readTcpTable): number | undefined {
  const local = procAddress(ip, port);
  if (!local) return undefined;
  for (let i = 0; i < READS; i++) {
    let table: string;
    try {
      table = read();
    } catch {
      return undefined;
    }
    for (const line of table.split('\n')) {
      const f = line.trim().split(/\s+/);
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid …
      // Only the connection in use: on loopback Linux reuses a port still in TIME_WAIT (tcp_tw_reuse
      // = 2), and that line's uid 0 made a seat's shell look like the portal's root user, which
      // took a third seat on a busy machine (a burst of the learner's own connections just before).
      if (f[1] === local && f[3] === ESTABLISHED) return Number(f[7]);
    }
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
