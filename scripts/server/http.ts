/**
 * `dplab serve`: one Node HTTP server for the built site, the API and the terminal socket, on the
 * server core (core/http-server.ts: limits, connection cap, listening) that the portal shares.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { networkInterfaces } from 'node:os';
import { createRunner, type Runner, type RunnerOptions } from './app.ts';
import { createStaticHandler } from './static.ts';
import { createBuildPageHandler } from './build-page.ts';
import type { BuildStatus } from '../base/site-build.ts';
import { generateToken } from './security.ts';
import { createHttpServer, HTTP_LIMITS, isLoopback, listen, type HttpLimits } from './core/http-server.ts';
import { DplabError } from '../base/errors.ts';

export const DEFAULT_PORT = 4321;
export const DEFAULT_HOST = '127.0.0.1';
/** When the default port is taken (and none was asked for), try the next few. */
const PORT_ATTEMPTS = 10;

export interface ServeOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** True when the user named the port: then a busy port is an error, not a reason to move. */
  portExplicit?: boolean;
  token?: string;
  /** The read-only viewer link's token; a fresh one when absent. */
  viewerToken?: string;
  siteDir: string;
  terminalNotice?: RunnerOptions['terminalNotice'];
  terminalReady?: RunnerOptions['terminalReady'];
  /** Host names besides loopback and the bound address that pages and the API answer to (--allow-host). */
  allowHosts?: readonly string[];
  maxTerminals?: number;
  /** Whether lab pages may have the next lab's cluster started ahead (`--no-warm`: no). */
  warm?: boolean;
  /** The runner's services; tests replace the parts they play (the host's memory, say). */
  services?: RunnerOptions['services'];
  /** Tests shorten these. */
  limits?: Partial<HttpLimits>;
  /**
   * The course is being built: until `finished`, every page is the build page (its progress,
   * then the course); the API and terminals work meanwhile.
   */
  building?: { readonly finished: boolean; status(): BuildStatus };
}

export interface RunningServer {
  server: Server;
  runner: Runner;
  host: string;
  port: number;
  /** The link to open: `http://127.0.0.1:<port>/#token=<token>` (the token stays in the browser). */
  url: string;
  /** The presenter's viewer link: `http://…/watch/#viewer=<token>`, a read-only mirror of the broadcast terminal. */
  viewerUrl: string;
  close(): Promise<void>;
}

/** The read-only link a presenter hands the audience (site/pages/watch.astro reads the fragment). */
export function viewerLink(origin: string, viewerToken: string): string {
  return `${origin}/watch/#viewer=${viewerToken}`;
}

function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** This machine's own non-loopback addresses: what a wildcard bind answers on. */
export function interfaceAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (!a.internal) out.push(a.address);
  return out;
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const host = opts.host ?? DEFAULT_HOST;
  const token = opts.token ?? generateToken();
  // A wildcard bind answers on every interface; its addresses are ours, so they are allowed.
  const bound = isLoopback(host) ? [] : isWildcard(host) ? interfaceAddresses() : [host];
  const runner = createRunner({
    token,
    viewerToken: opts.viewerToken,
    extraHosts: [...bound, ...(opts.allowHosts ?? [])],
    terminalNotice: opts.terminalNotice,
    terminalReady: opts.terminalReady,
    maxTerminals: opts.maxTerminals,
    warm: opts.warm,
    services: opts.services,
  });
  const serveStatic = createStaticHandler(opts.siteDir);
  const building = opts.building;
  const serveBuildPage = building ? createBuildPageHandler(() => building.status()) : undefined;
  const servePage = (req: IncomingMessage, res: ServerResponse) =>
    serveBuildPage && !building?.finished ? serveBuildPage(req, res) : void serveStatic(req, res);
  const limits = { ...HTTP_LIMITS, ...opts.limits };
  const server = createHttpServer({
    limits,
    maxConnections: limits.maxConnections,
    onRequest: (req, res) => runner.handle(req, res, () => servePage(req, res)),
    onUpgrade: (req, socket, head) => {
      if (!runner.handleUpgrade(req, socket, head)) socket.destroy();
    },
  });

  const wanted = opts.port ?? DEFAULT_PORT;
  const attempts = opts.portExplicit || wanted === 0 ? 1 : PORT_ATTEMPTS;
  let port = 0;
  for (let i = 0; i < attempts; i++) {
    try {
      port = await listen(server, wanted + i, host);
      break;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE' && i < attempts - 1) continue;
      if (code === 'EADDRINUSE') {
        throw new DplabError(`Port ${wanted + i} on ${host} is already in use.`, {
          fix: 'Stop the other program, or choose a port: `PORT=4400 npm start` (or `dplab serve --port 4400`).',
          status: 400,
        });
      }
      if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
        throw new DplabError(`Cannot listen on ${host}: no such local address.`, {
          fix: 'Use --host 127.0.0.1 (the default) or an address of this machine.',
          status: 400,
        });
      }
      if (code === 'EACCES')
        throw new DplabError(`Not allowed to listen on port ${wanted + i}.`, { fix: 'Choose a port above 1024.', status: 400 });
      throw err;
    }
  }
  // 0.0.0.0 is not an address a browser can be sent to: show a real one (or loopback).
  const reachable = isWildcard(host) ? (bound.find((a) => !a.includes(':')) ?? '127.0.0.1') : host;
  const shownHost = isLoopback(reachable) ? '127.0.0.1' : reachable.includes(':') ? `[${reachable}]` : reachable;
  return {
    server,
    runner,
    host,
    port,
    url: `http://${shownHost}:${port}/#token=${token}`,
    viewerUrl: viewerLink(`http://${shownHost}:${port}`, runner.viewerToken),
    async close() {
      await runner.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
