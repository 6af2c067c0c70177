/**
 * The runner: the API, the terminal WebSocket and the security contract, as one module that
 * both `astro dev` (through the integration) and `dplab serve` mount. Never two copies. Its parts:
 * the gate at the door (runner-gate.ts), the sockets (runner-sockets.ts), the API routes over
 * the services (routes/), all on the server core (core/) that the portal shares.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { kubeconfigPath, type Mode } from '../catalogue/modes.ts';
import { dropTo, handOver, shellUser } from '../terminals/shell-user.ts';
import { sweepDockerRelays } from '../labs/docker-relay.ts';
import { matchRoute, readJsonBody, requestSignal, requestUrl, sendError, sendJson, sendRefusal, type Route } from './core/router.ts';
import { apiRoutes } from './routes/index.ts';
import { terminalNotice } from './terminal-notice.ts';
import { sharedRead } from './shared-read.ts';
import { runnerServices, type ClusterService, type RunnerServices } from '../services/runner-services.ts';
import { TerminalBroadcast } from '../terminals/broadcast.ts';
import { DplabError } from '../base/errors.ts';
import { checkedTokens, createRunnerGate, type RunnerGate } from './runner-gate.ts';
import { createRunnerSockets } from './runner-sockets.ts';

export interface RunnerOptions {
  token: string;
  /**
   * The read-only credential of the presenter's viewer link: accepted on the watch socket only,
   * never on another API route or the terminal socket. A fresh one when absent.
   */
  viewerToken?: string;
  /** Names besides loopback that this runner answers to (the --host it was bound to). */
  extraHosts?: readonly string[];
  /**
   * Lab terminals print a notice when their cluster is not ready: `true` reads it from the cluster
   * service's status; a function replaces that reading (tests use one to delay the notice).
   */
  terminalNotice?: boolean | ((mode: Mode, signal: AbortSignal) => Promise<string | null>);
  /**
   * How a terminal that printed a notice learns its cluster became ready: by default the cluster
   * service's status events; tests give their own.
   */
  terminalReady?: (mode: Mode, then: () => void) => () => void;
  /** The services the routes run on; tests replace the parts they play. */
  services?: Partial<RunnerServices>;
  /** The event stream's keep-alive interval (tests shorten it). */
  sseHeartbeatMs?: number;
  /** Most shells open at once (DEFAULT_MAX_TERMINALS); one more socket is told so and closed. */
  maxTerminals?: number;
  /** Whether a lab page may have the next lab's cluster started ahead (default yes; `dplab serve --no-warm`). */
  warm?: boolean;
}

/** A classroom laptop runs a few tabs with a terminal or two each; 100 shells is an attack. */
const DEFAULT_MAX_TERMINALS = 16;
/** Terminals opened within this long of one cluster status read share its notice (shared-read.ts). */
const NOTICE_FRESH_MS = 1_000;

export interface Runner {
  readonly token: string;
  readonly viewerToken: string;
  /** Which terminal the watch socket mirrors, and its watchers. */
  readonly broadcast: TerminalBroadcast;
  /** Connect-style handler: API routes and old `?token=` links; anything else goes to `next`. */
  handle(req: IncomingMessage, res: ServerResponse, next: () => void): void;
  /** Takes the upgrade when it is ours (returns true), leaves other upgrades (Vite HMR) alone. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Open terminal sessions, for tests and the status line. */
  readonly openTerminals: number;
  /** Closes every terminal socket and resolves once their shells have ended (SIGKILL at the latest). */
  close(): Promise<void>;
}

/** The notice a lab terminal prints while its cluster is not ready, as `opts.terminalNotice` asks. */
function noticeReader(
  opts: RunnerOptions,
  services: RunnerServices,
): ((mode: Mode, signal: AbortSignal) => Promise<string | null>) | undefined {
  if (typeof opts.terminalNotice === 'function') return opts.terminalNotice;
  if (!opts.terminalNotice) return undefined;
  return sharedRead((mode: Mode, signal: AbortSignal) => terminalNotice(mode, services.clusters, signal), NOTICE_FRESH_MS);
}

/** How a terminal that printed a notice learns its cluster is ready: the cluster service's status events. */
function readyWaiter(clusters: ClusterService): (mode: Mode, then: () => void) => () => void {
  return (mode, then) =>
    clusters.events.on((e) => {
      if (e.type === 'status' && e.status.mode === mode && e.status.state === 'ready') then();
    });
}

/**
 * A seat's shells run as the seat's own user (terminals/shell-user.ts): a cluster that comes up
 * while a shell is open gets a kubeconfig that shell can read too. Returns the unsubscribe.
 */
function shareClustersWithSeatUser(clusters: ClusterService): (() => void) | undefined {
  const user = shellUser();
  if (!user) return undefined;
  // Not root, or no setpriv: say so at start, not at the learner's first terminal.
  dropTo(user);
  // Relays a runner killed mid-solve left behind are nobody's now (docker-relay.ts).
  sweepDockerRelays();
  return clusters.events.on((e) => {
    if (e.type !== 'status' || e.status.state !== 'ready') return;
    try {
      handOver(kubeconfigPath(e.mode), user);
    } catch (err) {
      console.error(`[dplab] could not hand ${kubeconfigPath(e.mode)} to the seat's shell user:`, err);
    }
  });
}

/** An API call: the gate (a route marked public needs no token), then 404, 405, or the route. */
async function answerApi(
  routes: readonly Route[],
  authorize: RunnerGate['authorize'],
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
) {
  const method = req.method ?? 'GET';
  const found = matchRoute(routes, method, url.pathname);
  const route = found && 'route' in found ? found.route : null;
  const verdict = authorize(req, { method, isUpgrade: false, needsToken: !route?.public });
  if (!verdict.ok) return sendRefusal(res, verdict);
  if (!found) return sendJson(res, 404, { error: { message: `No API route ${method} ${url.pathname}.` } });
  if (!('route' in found)) {
    res.setHeader('allow', found.allowed.join(', '));
    return sendJson(res, 405, { error: { message: `${method} is not allowed here; use ${found.allowed.join(' or ')}.` } });
  }
  const signal = requestSignal(res);
  try {
    const body = method === 'POST' || method === 'PUT' ? await readJsonBody(req) : undefined;
    await found.route.handler(req, res, { url, params: found.params, body, signal });
  } catch (err) {
    if (!(err instanceof DplabError)) console.error('[dplab] API error', err);
    sendError(res, err);
  }
}

export function createRunner(opts: RunnerOptions): Runner {
  const { token, viewerToken } = checkedTokens(opts);
  const broadcast = new TerminalBroadcast();
  // The composition root: every route and the terminal notice run on these services.
  const services = runnerServices(opts.services);
  const routes = apiRoutes(services, { sseHeartbeatMs: opts.sseHeartbeatMs, broadcast, viewerToken, warm: opts.warm });
  const gate = createRunnerGate(token, viewerToken, opts.extraHosts ?? []);
  const sockets = createRunnerSockets({
    authorize: gate.authorize,
    broadcast,
    notice: noticeReader(opts, services),
    whenReady: opts.terminalReady ?? readyWaiter(services.clusters),
    maxTerminals: opts.maxTerminals ?? DEFAULT_MAX_TERMINALS,
  });
  const handingOver = shareClustersWithSeatUser(services.clusters);
  return {
    token,
    viewerToken,
    broadcast,
    get openTerminals() {
      return sockets.open;
    },
    handle(req, res, next) {
      const url = requestUrl(req);
      if (!url) return sendJson(res, 400, { error: { message: 'Malformed request URL.' } });
      if (url.pathname === '/api' || url.pathname.startsWith('/api/')) void answerApi(routes, gate.authorize, req, res, url);
      else gate.answerPage(req, res, url, next);
    },
    handleUpgrade: sockets.upgrade,
    async close() {
      handingOver?.();
      await sockets.close();
    },
  };
}
