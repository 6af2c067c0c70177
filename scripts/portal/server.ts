/**
 * `dplab portal`'s HTTP server: the built course, the learners' join page, the instructor's
 * dashboard, and every learner's `/api/*` call and terminal socket forwarded to their own
 * seat. The gate (gate.ts) runs first on everything but pages; the seat is chosen by the
 * learner's token alone. Its parts: who is asking (portal-door.ts), the portal's own API
 * (portal-api.ts), the forwarding to seats (seat-forwarding.ts), pages (here), all on the server
 * core (scripts/server/core/) that the runner stands on too. It loads no part of the runner and
 * no lab (`npm run deps`: portal-imports-no-lab).
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { DplabError } from '../base/errors.ts';
import { projectRoot } from '../base/paths.ts';
import { createHttpServer, HTTP_LIMITS, isLoopback, listen } from '../server/core/http-server.ts';
import { requestUrl, sendError, sendJson } from '../server/core/router.ts';
import { pageHeaders } from '../server/page-policy.ts';
import { generateToken } from '../server/security.ts';
import { createStaticHandler } from '../server/static.ts';
import type { Mode } from '../wire/modes.ts';
import type { LabOutline } from './dashboard.ts';
import { checkAddress, portalAddress, TokenBook } from './gate.ts';
import { portalApi } from './portal-api.ts';
import { portalDoor, type PortalDoor } from './portal-door.ts';
import { forwardLearnerCall, forwardSocket } from './seat-forwarding.ts';
import type { SeatBackend } from './seat-backend.ts';
import { Workshop, type Restored, type WorkshopOptions } from './workshop.ts';
import { WorkshopStore } from './workshop-store.ts';

// From the project root, not from this module: compiled, this code is a chunk under dist-cli/.
const PAGES_DIR = join(projectRoot, 'scripts', 'portal', 'pages');
const LEARNER_SCRIPT = '/portal/assets/learner.js';

/** The portal's own pages and their scripts; nothing else under /portal/ is a file. */
const PAGES: Record<string, { file: string; type: string }> = {
  '/portal/join': { file: 'join.html', type: 'text/html; charset=utf-8' },
  '/portal/dashboard': { file: 'dashboard.html', type: 'text/html; charset=utf-8' },
  '/portal/assets/portal.css': { file: 'portal.css', type: 'text/css; charset=utf-8' },
  '/portal/assets/join.js': { file: 'join.js', type: 'text/javascript; charset=utf-8' },
  '/portal/assets/dashboard.js': { file: 'dashboard.js', type: 'text/javascript; charset=utf-8' },
  [LEARNER_SCRIPT]: { file: 'learner.js', type: 'text/javascript; charset=utf-8' },
};

/** Seats one client may hold (a learner with a second browser). A room behind one NAT address looks like one client behind TLS: PortalOptions.seatsPerClient (no flag yet). */
const SEATS_PER_CLIENT = 2;
/** What /api/health says to a Host that is not the portal's (a probe by pod IP). */
const PROBE_ANSWER = { ok: true } as const;

export interface PortalOptions {
  backend: SeatBackend;
  lab: LabOutline;
  siteDir: string;
  host?: string;
  port?: number;
  /** TLS is terminated in front of us: listen beyond loopback over plain HTTP, accept https origins of `publicHosts`. */
  behindTls?: boolean;
  publicHosts?: readonly string[];
  code?: string;
  instructorToken?: string;
  warm?: readonly Mode[];
  seats?: number;
  maxSeats?: number;
  idleMs?: number;
  /** Seats one client may hold (SEATS_PER_CLIENT); the operator's own user on this host is not counted. */
  seatsPerClient?: number;
  timing?: WorkshopOptions['timing'];
  /** A line for the operator (seats an earlier portal left: taken back, set aside or removed). */
  note?: (line: string) => void;
  /**
   * The portal's state folder: the workshop's code and each seat's tokens and learner are kept in
   * `<stateDir>/workshop/`, so a portal started again on it takes every seat back. Absent: nothing
   * is kept, and seats an earlier portal left are removed.
   */
  stateDir?: string;
}

export interface RunningPortal {
  server: Server;
  workshop: Workshop;
  port: number;
  /** `http://127.0.0.1:<port>` (or the public https origin behind TLS). */
  origin: string;
  joinUrl: string;
  /** The instructor's link, token in the fragment. */
  dashboardUrl: string;
  code: string;
  instructorToken: string;
  close(): Promise<void>;
}

/** Workshop codes people type: no 0/O, 1/I/L. */
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
function workshopCode(): string {
  const bytes = generateToken();
  let out = '';
  for (let i = 0; out.length < 6; i++) out += CODE_ALPHABET[bytes.charCodeAt(i) % CODE_ALPHABET.length];
  return out;
}

function noteRestored(r: Restored, note: PortalOptions['note']): void {
  if (r.resumed.length) note?.(`Took back ${r.resumed.length} seat(s) an earlier portal left: ${r.resumed.join(', ')}.`);
  for (const s of r.setAside) note?.(`Seat ${s.id}: ${s.message}`);
  if (r.removed.length) note?.(`Removed ${r.removed.length} seat(s) an earlier portal left: ${r.removed.join(', ')}.`);
  for (const f of r.failed) note?.(`Could not remove seat ${f.id}, left by an earlier portal: ${f.message}`);
}

/** Plain HTTP beyond loopback would carry learners' tokens in the clear: refused unless TLS is in front. */
function checkListenAddress(opts: PortalOptions): string {
  const host = opts.host ?? '127.0.0.1';
  if (!isLoopback(host) && !opts.behindTls)
    throw new DplabError(
      `Refusing to serve the portal over plain HTTP on ${host}: learners' tokens would cross the network in the clear.`,
      {
        fix: 'Put a TLS terminator (an Ingress, Caddy, nginx) in front and pass --behind-tls --public-host <its name>, or listen on 127.0.0.1.',
        status: 400,
      },
    );
  if (opts.behindTls && !opts.publicHosts?.length)
    throw new DplabError('--behind-tls needs the name learners use: --public-host workshop.example.org.', { status: 400 });
  return host;
}

/** The workshop's code and the instructor's token: asked for, else kept by an earlier portal, else fresh. */
function workshopIdentity(opts: PortalOptions): { store?: WorkshopStore; code: string; instructorToken: string } {
  const store = opts.stateDir ? new WorkshopStore(join(opts.stateDir, 'workshop')) : undefined;
  // A restarted portal keeps the code on the whiteboard and the instructor's link.
  const saved = store?.readWorkshop();
  const instructorToken = opts.instructorToken ?? saved?.instructorToken ?? generateToken();
  const code = (opts.code ?? saved?.code ?? workshopCode()).toUpperCase();
  store?.writeWorkshop({ code, ...(opts.instructorToken ? {} : { instructorToken }) });
  return { store, code, instructorToken };
}

/**
 * Pages: the portal's own (join, dashboard, their assets) and the built course, to the portal's
 * own name only (DNS rebinding); the bare link goes to the join page.
 */
function pageServer(door: PortalDoor, siteDir: string): (req: IncomingMessage, res: ServerResponse, path: string) => void {
  const serveSite = createStaticHandler(siteDir, { headScripts: [LEARNER_SCRIPT] });
  const pages = new Map(Object.entries(PAGES).map(([path, p]) => [path, { body: readFileSync(join(PAGES_DIR, p.file)), type: p.type }]));
  return (req, res, path) => {
    const where = checkAddress({ method: 'GET', host: req.headers.host, isUpgrade: false }, door.address());
    if (!where.ok) {
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', ...pageHeaders() });
      res.end(`${where.message}\n`);
      return;
    }
    if (path === '/' || path === '/portal' || path === '/portal/') {
      // Learners open the portal's bare link; the course itself starts after joining.
      res.writeHead(302, { location: '/portal/join', 'cache-control': 'no-store' });
      res.end();
      return;
    }
    const page = pages.get(path);
    if (page) {
      res.writeHead(200, { 'content-type': page.type, 'content-length': page.body.length, 'cache-control': 'no-cache', ...pageHeaders() });
      res.end(req.method === 'HEAD' ? undefined : page.body);
      return;
    }
    void serveSite(req, res);
  };
}

/**
 * The one route that answers any Host: probes (the kubelet by pod IP, a load balancer) name none
 * of ours. To those it says two fixed bytes of news, the same whatever the portal holds, and it
 * does nothing: no token is read, nothing is counted, no other path is reached this way.
 */
function health(door: PortalDoor, req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: { message: 'Use GET.' } });
  const ours = checkAddress({ method: 'GET', host: req.headers.host, isUpgrade: false }, door.address()).ok;
  sendJson(res, 200, ours ? { ok: true, name: 'dataplane-lab-portal' } : PROBE_ANSWER);
}

/** Every request, by its path: the health probe, the portal's API, a learner's runner call, or a page. */
function requestHandler(door: PortalDoor, opts: PortalOptions, streams: Set<ServerResponse>) {
  const api = portalApi(door, { seatsPerClient: opts.seatsPerClient ?? SEATS_PER_CLIENT, streams });
  const page = pageServer(door, opts.siteDir);
  return (req: IncomingMessage, res: ServerResponse): void => {
    const url = requestUrl(req);
    if (!url) return sendJson(res, 400, { error: { message: 'Malformed request URL.' } });
    const path = url.pathname;
    if (path === '/api/health') return health(door, req, res);
    if (path.startsWith('/portal/api/')) {
      api(req, res, url).catch((err) => sendError(res, err));
      return;
    }
    if (path === '/api' || path.startsWith('/api/')) return forwardLearnerCall(door, req, res, url);
    page(req, res, path);
  };
}

/** Listens on the asked port (4400 by default), saying so in words when it is taken. */
async function listenPortal(server: Server, opts: PortalOptions, host: string): Promise<number> {
  try {
    return await listen(server, opts.port ?? 4400, host);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    throw new DplabError(`Port ${opts.port} on ${host} is already in use.`, {
      fix: 'Choose another: dplab portal --port 4500.',
      status: 400,
    });
  }
}

export async function startPortal(opts: PortalOptions): Promise<RunningPortal> {
  const host = checkListenAddress(opts);
  const { store, code, instructorToken } = workshopIdentity(opts);
  const tokens = new TokenBook(instructorToken);
  const streams = new Set<ServerResponse>();
  let address = portalAddress(0);
  let workshop: Workshop | undefined = undefined;
  const door = portalDoor(tokens, !!opts.behindTls, { address: () => address, workshop: () => workshop! });
  const server = createHttpServer({
    limits: HTTP_LIMITS,
    // A class of 30 with a few tabs each, their event streams and terminals, through one server;
    // over it the quietest socket makes room, so a flood cannot keep the class out.
    maxConnections: HTTP_LIMITS.maxConnections * 8,
    onRequest: requestHandler(door, opts, streams),
    onUpgrade: (req, socket, head) => forwardSocket(door, req, socket, head),
  });
  const port = await listenPortal(server, opts, host);
  // Behind TLS only the public name counts: this host's own addresses would be plain HTTP.
  address = portalAddress(port, { publicHosts: opts.publicHosts, behindTls: opts.behindTls });
  const origin = opts.behindTls ? `https://${opts.publicHosts![0]}` : `http://127.0.0.1:${port}`;
  const joinUrl = `${origin}/portal/join`;
  workshop = new Workshop({
    backend: opts.backend,
    tokens,
    lab: opts.lab,
    code,
    warm: opts.warm ?? [],
    maxSeats: opts.maxSeats ?? Math.max(opts.seats ?? 0, 30),
    idleMs: opts.idleMs ?? 10 * 60_000,
    joinUrl,
    timing: opts.timing,
    store,
  });
  noteRestored(await workshop.restore(), opts.note);
  await workshop.prepare(opts.seats ?? 0);
  return {
    server,
    workshop,
    port,
    origin,
    joinUrl,
    dashboardUrl: `${origin}/portal/dashboard#token=${instructorToken}`,
    code,
    instructorToken,
    async close() {
      workshop!.close();
      for (const s of streams) s.end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
