/**
 * `dplab portal`'s HTTP server: the built course, the learners' join page, the instructor's
 * dashboard, and every learner's `/api/*` call and terminal socket forwarded to their own
 * seat. The gate (gate.ts) runs first on everything but pages; the seat is chosen by the
 * learner's token alone.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { DplabError } from '../base/errors.ts';
import { projectRoot } from '../base/paths.ts';
import { GuessLimiters } from '../server/guess-limit.ts';
import { clientSource, isOperator } from './client-source.ts';
import { HTTP_LIMITS, isLoopback } from '../server/http.ts';
import { capConnections } from '../server/connection-shedding.ts';
import { pageHeaders } from '../server/page-policy.ts';
import { refuseUpgrade } from '../server/refuse-upgrade.ts';
import { readJsonBody, sendError, sendJson } from '../server/router.ts';
import { generateToken } from '../server/security.ts';
import { sendComment, sendEvent, startEventStream } from '../server/sse.ts';
import { createStaticHandler } from '../server/static.ts';
import { broadcastRequestSchema, joinRequestSchema } from '../wire/portal.ts';
import { isSeatId } from '../wire/seat.ts';
import type { Mode } from '../wire/modes.ts';
import type { LabOutline } from './dashboard.ts';
import { forwardHttp, forwardUpgrade } from './forward.ts';
import { checkAddress, portalAddress, TokenBook, type Principal, type PortalVerdict } from './gate.ts';
import type { SeatBackend } from './seat-backend.ts';
import { Workshop, type Restored, type WorkshopOptions } from './workshop.ts';
import { WorkshopStore } from './workshop-store.ts';
import { answerClientError } from '../server/client-error.ts';

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

/** Joins per client: a class arriving at once through one address is fine, a script making seats is not. */
const JOIN_LIMIT = { burst: 60, leakMs: 1_000 } as const;
/** Seats one client may hold (a learner with a second browser). A room behind one NAT address looks like one client behind TLS: PortalOptions.seatsPerClient (no flag yet). */
const SEATS_PER_CLIENT = 2;
/** What /api/health says to a Host that is not the portal's (a probe by pod IP). */
const PROBE_ANSWER = { ok: true } as const;
/** Dashboard event streams keep alive with a comment line this often. */
const SSE_HEARTBEAT_MS = 15_000;
/** The runner paths a learner may reach: its API and its terminal socket. */
const TERMINAL_PATH = '/api/terminal';
/** The presenter's read-only terminal socket on each runner. */
const WATCH_PATH = '/api/terminal/watch';

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

function refuse(res: ServerResponse, verdict: Extract<PortalVerdict, { ok: false }>): void {
  if (verdict.retryAfterSeconds) res.setHeader('retry-after', String(verdict.retryAfterSeconds));
  sendJson(res, verdict.status, { error: { message: verdict.message } });
}

export async function startPortal(opts: PortalOptions): Promise<RunningPortal> {
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
  const store = opts.stateDir ? new WorkshopStore(join(opts.stateDir, 'workshop')) : undefined;
  // A restarted portal keeps the code on the whiteboard and the instructor's link.
  const saved = store?.readWorkshop();
  const instructorToken = opts.instructorToken ?? saved?.instructorToken ?? generateToken();
  const code = (opts.code ?? saved?.code ?? workshopCode()).toUpperCase();
  store?.writeWorkshop({ code, ...(opts.instructorToken ? {} : { instructorToken }) });
  const tokens = new TokenBook(instructorToken);
  const joins = new GuessLimiters(JOIN_LIMIT.burst, JOIN_LIMIT.leakMs);
  const wrongCodes = new GuessLimiters();
  const seatsPerClient = opts.seatsPerClient ?? SEATS_PER_CLIENT;
  const serveSite = createStaticHandler(opts.siteDir, { headScripts: [LEARNER_SCRIPT] });
  const pages = new Map(Object.entries(PAGES).map(([path, p]) => [path, { body: readFileSync(join(PAGES_DIR, p.file)), type: p.type }]));
  const streams = new Set<ServerResponse>();
  let address = portalAddress(0);
  let workshop: Workshop | undefined = undefined;
  const ws = () => workshop!;

  function identify(req: IncomingMessage, isUpgrade: boolean): { ok: true; who: Principal } | Extract<PortalVerdict, { ok: false }> {
    const where = checkAddress({ method: req.method ?? 'GET', host: req.headers.host, origin: req.headers.origin, isUpgrade }, address);
    if (!where.ok) return where;
    return tokens.identify(req, () => clientSource(req, !!opts.behindTls).key);
  }

  function instructorOnly(req: IncomingMessage): PortalVerdict {
    const who = identify(req, false);
    if (!who.ok) return who;
    return who.who.kind === 'instructor' ? { ok: true } : { ok: false, status: 403, message: 'Only the instructor may do this.' };
  }

  async function portalApi(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const path = url.pathname;
    if (path === '/portal/api/join') {
      if (method !== 'POST') return sendJson(res, 405, { error: { message: 'Use POST.' } });
      const where = checkAddress({ method, host: req.headers.host, origin: req.headers.origin, isUpgrade: false }, address);
      if (!where.ok) return refuse(res, where);
      // Per client (client-source.ts): the right code always gets through; wrong ones and a
      // stream of joins are held for the client that sends them, and nobody else.
      const source = clientSource(req, !!opts.behindTls);
      const parsed = joinRequestSchema.safeParse(await readJsonBody(req));
      if (!parsed.success)
        return sendJson(res, 400, { error: { message: parsed.error.issues[0]?.message ?? 'Enter the code and your name.' } });
      const right = ws().codeMatches(parsed.data.code);
      const wait = right ? joins.blockedFor(source.key) : wrongCodes.blockedFor(source.key);
      if (wait > 0)
        return refuse(res, {
          ok: false,
          status: 429,
          message: `Too many attempts to join; try again in ${wait} s.`,
          retryAfterSeconds: wait,
        });
      if (!right) wrongCodes.wrongGuess(source.key);
      else joins.wrongGuess(source.key);
      // The operator's own user on this host (their browser, a script of theirs) is not counted; a
      // loopback client whose owner the kernel did not say is (before, it was not: a seat's shell
      // whose line was missed in /proc/net/tcp under load took a third seat).
      const counted = !isOperator(source);
      try {
        return sendJson(
          res,
          200,
          await ws().join(parsed.data.code, parsed.data.name, counted ? { client: source.key, share: seatsPerClient } : undefined),
        );
      } catch (err) {
        return sendError(res, err);
      }
    }
    if (path === '/portal/api/me') {
      const who = identify(req, false);
      if (!who.ok) return refuse(res, who);
      if (who.who.kind !== 'learner') return sendJson(res, 404, { error: { message: 'The instructor has no seat.' } });
      const view = ws().learnerView(who.who.seat);
      if (!view) return sendJson(res, 401, { error: { message: 'This seat is gone.' } });
      return sendJson(res, 200, view);
    }
    const verdict = instructorOnly(req);
    if (!verdict.ok) return refuse(res, verdict);
    if (path === '/portal/api/state' && method === 'GET') return sendJson(res, 200, ws().state());
    if (path === '/portal/api/events' && method === 'GET') {
      startEventStream(res);
      const send = () => sendEvent(res, 'state', ws().state());
      const off = ws().changes.on(send);
      const beat = setInterval(() => sendComment(res, 'heartbeat'), SSE_HEARTBEAT_MS);
      streams.add(res);
      res.on('close', () => {
        off();
        clearInterval(beat);
        streams.delete(res);
      });
      send();
      return;
    }
    if (path === '/portal/api/broadcast' && method === 'POST') {
      const parsed = broadcastRequestSchema.safeParse(await readJsonBody(req));
      if (!parsed.success) return sendJson(res, 400, { error: { message: 'A message of at most 500 characters.' } });
      ws().setBroadcast(parsed.data.message);
      return sendJson(res, 200, { ok: true });
    }
    const remove = /^\/portal\/api\/seats\/([^/]+)$/.exec(path);
    if (remove && method === 'DELETE') {
      const id = remove[1]!;
      if (!isSeatId(id) || !ws().has(id)) return sendJson(res, 404, { error: { message: 'No such seat.' } });
      await ws().removeSeat(id);
      return sendJson(res, 200, { ok: true });
    }
    if (path === '/portal/api/end' && method === 'POST') {
      const result = await ws().end();
      return sendJson(res, result.failed.length ? 500 : 200, result);
    }
    return sendJson(res, 404, { error: { message: `No portal route ${method} ${path}.` } });
  }

  /** A learner's runner call, to their seat and nowhere else. */
  function learnerApi(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const who = identify(req, false);
    if (!who.ok) return refuse(res, who);
    if (who.who.kind !== 'learner')
      return refuse(res, { ok: false, status: 403, message: 'The instructor has no seat of their own; use the dashboard.' });
    const seat = who.who.seat;
    const target = ws().target(seat);
    if ('waiting' in target) {
      res.setHeader('retry-after', '2');
      return sendJson(res, 503, { error: { message: target.waiting } });
    }
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') ws().touch(seat);
    const checks = /^\/api\/labs\/[^/]+\/(steps\/[^/]+\/(check|solve|reset)|reset)$/.test(url.pathname) || url.pathname === '/api/progress';
    const clusters = url.pathname.startsWith('/api/clusters/') && method !== 'GET';
    forwardHttp(req, res, { ...target, path: `${url.pathname}${url.search}` }, () => {
      if ((checks && method !== 'GET') || clusters) ws().refresh(seat, { clusters });
    });
  }

  /**
   * The one route that answers any Host: probes (the kubelet by pod IP, a load balancer) name none
   * of ours. To those it says two fixed bytes of news, the same whatever the portal holds, and it
   * does nothing: no token is read, nothing is counted, no other path is reached this way.
   */
  function health(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: { message: 'Use GET.' } });
    const ours = checkAddress({ method: 'GET', host: req.headers.host, isUpgrade: false }, address).ok;
    sendJson(res, 200, ours ? { ok: true, name: 'dataplane-lab-portal' } : PROBE_ANSWER);
  }

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://portal.invalid');
    } catch {
      return sendJson(res, 400, { error: { message: 'Malformed request URL.' } });
    }
    const path = url.pathname;
    if (path === '/api/health') return health(req, res);
    if (path.startsWith('/portal/api/')) {
      portalApi(req, res, url).catch((err) => sendError(res, err));
      return;
    }
    if (path === '/api' || path.startsWith('/api/')) return learnerApi(req, res, url);
    // Pages: our own name only (DNS rebinding).
    const where = checkAddress({ method: 'GET', host: req.headers.host, isUpgrade: false }, address);
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
  }

  function onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://portal.invalid');
    } catch {
      return refuseUpgrade(socket, 400, 'Malformed request URL.');
    }
    const who = identify(req, true);
    if (!who.ok) return refuseUpgrade(socket, who.status, who.message);
    const watch = /^\/portal\/api\/seats\/([^/]+)\/watch$/.exec(url.pathname);
    if (watch) {
      if (who.who.kind !== 'instructor') return refuseUpgrade(socket, 403, 'Only the instructor may watch a seat.');
      const id = watch[1];
      if (!isSeatId(id) || !ws().has(id)) return refuseUpgrade(socket, 404, 'No such seat.');
      const target = ws().target(id);
      if ('waiting' in target) return refuseUpgrade(socket, 503, target.waiting);
      return forwardUpgrade(req, socket, head, { ...target, path: `${WATCH_PATH}${url.search}` });
    }
    if (url.pathname !== TERMINAL_PATH) return refuseUpgrade(socket, 404, 'No such socket.');
    if (who.who.kind !== 'learner') return refuseUpgrade(socket, 403, 'The instructor has no seat of their own.');
    const seat = who.who.seat;
    const target = ws().target(seat);
    if ('waiting' in target) return refuseUpgrade(socket, 503, target.waiting);
    forwardUpgrade(req, socket, head, { ...target, path: `${url.pathname}${url.search}` }, () => ws().touch(seat));
  }

  const server = createServer(
    {
      headersTimeout: HTTP_LIMITS.headersMs,
      requestTimeout: HTTP_LIMITS.requestMs,
      keepAliveTimeout: HTTP_LIMITS.keepAliveMs,
      connectionsCheckingInterval: HTTP_LIMITS.checkEveryMs,
    },
    onRequest,
  );
  // A class of 30 with a few tabs each, their event streams and terminals, through one server;
  // over it the quietest socket makes room, so a flood cannot keep the class out.
  capConnections(server, HTTP_LIMITS.maxConnections * 8);
  server.on('upgrade', onUpgrade);
  server.on('clientError', answerClientError);
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new DplabError(`Port ${opts.port} on ${host} is already in use.`, {
              fix: 'Choose another: dplab portal --port 4500.',
              status: 400,
            })
          : err,
      ),
    );
    server.listen(opts.port ?? 4400, host, () => {
      const a = server.address();
      resolve(typeof a === 'object' && a ? a.port : 0);
    });
  });
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
