/**
 * An upgrade (a terminal or watch socket) refused in plain HTTP, by the runner and the portal
 * alike. The socket is destroyed once the answer is written: a client that never closes its side
 * must not keep it open, since an upgrade socket is never shed to make room (connection-shedding.ts)
 * and a few hundred held half-open would otherwise fill the server (issue 36).
 */
import type { Duplex } from 'node:stream';

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export function refuseUpgrade(socket: Duplex, status: number, message: string, headers: Record<string, string> = {}): void {
  const body = `${message}\n`;
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Bad Request'}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
  // A peer that does not read keeps the write from finishing: it gets a moment, not forever.
  setTimeout(() => socket.destroy(), 2_000).unref();
}
