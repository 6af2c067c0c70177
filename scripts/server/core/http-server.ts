/**
 * The HTTP server the runner (`dplab serve`) and the portal (`dplab portal`) both stand on: Node's
 * server with the slow-client limits, the connection cap that sheds the quietest socket
 * (connection-shedding.ts), the answer to a connection Node gave up on (client-error.ts), and
 * listening. What each answers is theirs; how a socket is kept or cut is this, written once.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { capConnections } from './connection-shedding.ts';
import { answerClientError } from './client-error.ts';

/**
 * Slow clients are cut off: a connection must finish its headers within `headersMs` and its
 * whole request within `requestMs`, and may sit idle between requests for `keepAliveMs`.
 * Upgraded sockets (terminals) and streams we answer (events) are not requests in flight, so
 * they are not cut. Node checks these every `checkEveryMs`.
 */
export interface HttpLimits {
  headersMs: number;
  requestMs: number;
  keepAliveMs: number;
  checkEveryMs: number;
  maxConnections: number;
}

export const HTTP_LIMITS: Readonly<HttpLimits> = {
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 5_000,
  checkEveryMs: 1_000,
  /** Sockets at once; a browser needs a handful per tab. Over it the quietest is shed (connection-shedding.ts). */
  maxConnections: 256,
};

export function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === 'localhost' || host === '::1' || host.startsWith('127.');
}

interface HttpServerParts {
  limits: Readonly<HttpLimits>;
  /** Sockets at once (the runner `limits.maxConnections`, the portal a class's worth more). */
  maxConnections: number;
  onRequest(req: IncomingMessage, res: ServerResponse): void;
  /** Takes every upgrade: it hands the socket on or refuses it (refuse-upgrade.ts). */
  onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
}

export function createHttpServer(parts: HttpServerParts): Server {
  const { limits } = parts;
  const server = createServer(
    {
      headersTimeout: limits.headersMs,
      requestTimeout: limits.requestMs,
      keepAliveTimeout: limits.keepAliveMs,
      connectionsCheckingInterval: limits.checkEveryMs,
    },
    parts.onRequest,
  );
  // Not `server.maxConnections`: that refuses the newcomer, so a flood would lock the learner out.
  capConnections(server, parts.maxConnections);
  server.on('upgrade', parts.onUpgrade);
  // A client that sends garbage gets a 400, an idle socket a quiet close; the server goes on.
  server.on('clientError', answerClientError);
  return server;
}

/** Listens on `port` (0: a free one) and resolves with the port it got; rejects with the listen error. */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}
