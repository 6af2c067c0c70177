/**
 * Forwarding a learner's request to their seat's runner, after the portal's gate chose the
 * seat. The seat runner applies the same security contract as on a laptop, so every request
 * is rewritten to look like its own page's: its token (Authorization, or the terminal
 * socket's token subprotocol), its Host, and its Origin when the browser sent one. Nothing
 * else of the learner's credentials travels on: no cookie, no forwarded-for, no Referer.
 */
import { request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { refuseUpgrade } from '../server/core/refuse-upgrade.ts';
import { TOKEN_SUBPROTOCOL_PREFIX } from '../server/security.ts';
import { SEAT_UNREACHABLE_HEADER } from '../wire/portal.ts';
import type { SeatEndpoint } from './seat-backend.ts';

/** Headers that describe one hop, never the request (RFC 9110 §7.6.1), and what we never pass on. */
const DROPPED = new Set([
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'cookie',
  'referer',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
  'authorization',
  'host',
  'origin',
  'sec-websocket-protocol',
]);

/** The subprotocol list with the learner's token swapped for the seat's (other protocols kept). */
export function seatSubprotocols(header: string | string[] | undefined, seatToken: string): string | undefined {
  const text = Array.isArray(header) ? header.join(',') : header;
  if (text === undefined) return undefined;
  const offered = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const kept = offered.filter((p) => !p.startsWith(TOKEN_SUBPROTOCOL_PREFIX));
  if (kept.length < offered.length) kept.push(`${TOKEN_SUBPROTOCOL_PREFIX}${seatToken}`);
  return kept.join(', ');
}

/** The headers the seat's runner gets for this request (pure: unit-tested). */
export function seatRequestHeaders(
  incoming: IncomingHttpHeaders,
  endpoint: SeatEndpoint,
  seatToken: string,
  opts: { upgrade?: boolean } = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || DROPPED.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  out.host = endpoint.host;
  if (incoming.origin !== undefined) out.origin = `http://${endpoint.host}`;
  if (opts.upgrade) {
    out.connection = 'Upgrade';
    out.upgrade = String(incoming.upgrade ?? 'websocket');
    const protocols = seatSubprotocols(incoming['sec-websocket-protocol'], seatToken);
    if (protocols !== undefined) out['sec-websocket-protocol'] = protocols;
    // The terminal socket carries its token as a subprotocol; a header would be a second copy.
    if (incoming.authorization !== undefined) out.authorization = `Bearer ${seatToken}`;
  } else {
    out.authorization = `Bearer ${seatToken}`;
  }
  return out;
}

/** Response headers that are the runner's hop, not the answer. */
const RESPONSE_DROPPED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'set-cookie']);

function sendBadGateway(res: ServerResponse, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ error: { message } });
  res.writeHead(502, {
    [SEAT_UNREACHABLE_HEADER]: '1',
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(body);
}

/**
 * Forward one HTTP request (streams included: the event stream stays open as long as both
 * ends do). `done` runs once the seat's answer has been passed on, with its status.
 */
export function forwardHttp(
  req: IncomingMessage,
  res: ServerResponse,
  target: { endpoint: SeatEndpoint; token: string; path: string },
  done?: (status: number) => void,
): void {
  const url = new URL(target.path, target.endpoint.url);
  const upstream = request(
    url,
    { method: req.method, headers: seatRequestHeaders(req.headers, target.endpoint, target.token) },
    (answer) => {
      const headers: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !RESPONSE_DROPPED.has(k)) headers[k] = v;
      res.writeHead(answer.statusCode ?? 502, headers);
      answer.pipe(res);
      answer.on('end', () => done?.(answer.statusCode ?? 502));
      answer.on('error', () => res.destroy());
    },
  );
  upstream.on('error', () => sendBadGateway(res, "The seat's runner is not answering; ask your instructor."));
  // The learner left (a closed tab, an ended event stream): the seat's side goes too.
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
}

/**
 * Forward a WebSocket upgrade as bytes: the rewritten request head, then both directions
 * piped. The runner's own answer (101, or its refusal) goes back unchanged; `onClientData`
 * sees what the learner sends (the portal counts it as activity).
 */
export function forwardUpgrade(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  target: { endpoint: SeatEndpoint; token: string; path: string },
  onClientData?: (bytes: number) => void,
): void {
  const url = new URL(target.endpoint.url);
  const headers = seatRequestHeaders(req.headers, target.endpoint, target.token, { upgrade: true });
  const upstream = connect({ host: url.hostname, port: Number(url.port || 80) });
  const close = () => {
    upstream.destroy();
    socket.destroy();
  };
  upstream.once('connect', () => {
    const lines = [`GET ${target.path} HTTP/1.1`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''];
    upstream.write(lines.join('\r\n'));
    if (head.length) upstream.write(head);
    upstream.pipe(socket);
    socket.pipe(upstream);
  });
  if (onClientData) socket.on('data', (d: Buffer) => onClientData(d.length));
  upstream.on('error', () => {
    if (socket.writable && upstream.bytesRead === 0) refuseUpgrade(socket, 502, "The seat's runner is not answering.");
    else close();
  });
  upstream.on('close', () => socket.destroy());
  socket.on('error', close);
  socket.on('close', () => upstream.destroy());
}
