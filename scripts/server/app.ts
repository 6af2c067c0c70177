/**
 * The runner: the API, the terminal WebSocket and the security contract, as one module that
 * both `astro dev` (through the integration) and `dplab serve` mount. Never two copies.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { isMode, kubeconfigPath, type Mode } from '../catalogue/modes.ts';
import { dropTo, handOver, shellUser } from '../terminals/shell-user.ts';
import { sweepDockerRelays } from '../labs/docker-relay.ts';
import {
  allowedHosts,
  gate,
  generateToken,
  requestToken,
  tokensEqual,
  TERMINAL_SUBPROTOCOL,
  weakTokenReason,
  type GateInput,
  type GateResult,
} from './security.ts';
import { GuessLimiter } from './guess-limit.ts';
import { refuseUpgrade } from './refuse-upgrade.ts';
import { pageHeaders } from './page-policy.ts';
import { matchRoute, readJsonBody, sendError, sendJson } from './router.ts';
import { apiRoutes } from './routes/index.ts';
import { terminalNotice } from './terminal-notice.ts';
import { sharedRead } from './shared-read.ts';
import { runnerServices, type RunnerServices } from '../services/runner-services.ts';
import { attachTerminal, refuseTerminal } from './terminal-socket.ts';
import { attachWatcher } from './watch-socket.ts';
import { TerminalBroadcast } from '../terminals/broadcast.ts';
import { sizeFromQuery, TERMINAL_LIMITS } from '../terminals/protocol.ts';
import { DplabError } from '../base/errors.ts';
import { nodeShellFor } from './node-shell.ts';
import { clusterHandle } from '../clusters/providers.ts';

const TERMINAL_PATH = '/api/terminal';
/** The read-only mirror of the broadcast terminal (watch-socket.ts). */
const WATCH_PATH = '/api/terminal/watch';

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

function localPort(req: IncomingMessage): number {
  return req.socket.localPort ?? 0;
}

function onHold(seconds: number): string {
  return `Too many wrong tokens; try again in ${seconds} s.`;
}

function tokenPage(res: ServerResponse): void {
  const html = `<!doctype html><meta charset="utf-8"><title>Dataplane Lab: wrong token</title>
<body style="font-family:system-ui;max-width:40rem;margin:4rem auto;line-height:1.5">
<h1>This link's token does not match the running runner</h1>
<p>Each time the runner starts it prints a fresh link. Open the line that starts with
<code>Dataplane Lab: http://127.0.0.1:…/#token=…</code> in the terminal where you ran <code>npm start</code>.</p>
<p>To keep one token across restarts, start it with <code>DPLAB_TOKEN=&lt;your token&gt; npm start</code>.</p></body>`;
  res.writeHead(401, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...pageHeaders() });
  res.end(html);
}

export function createRunner(opts: RunnerOptions): Runner {
  const { token } = opts;
  const weak = weakTokenReason(token);
  if (weak)
    throw new DplabError(weak, {
      fix: 'Leave DPLAB_TOKEN unset for a fresh random token, or set a long one: DPLAB_TOKEN=$(openssl rand -hex 16)',
      status: 400,
    });
  const viewerToken = opts.viewerToken ?? generateToken();
  const weakViewer = weakTokenReason(viewerToken);
  if (weakViewer) throw new DplabError(`Viewer token: ${weakViewer}`, { status: 400 });
  if (tokensEqual(viewerToken, token))
    throw new DplabError('The viewer token must differ from the runner token: it is handed to an audience.', { status: 400 });
  const maxTerminals = opts.maxTerminals ?? DEFAULT_MAX_TERMINALS;
  const broadcast = new TerminalBroadcast();
  // The composition root: every route and the terminal notice run on these services.
  const services = runnerServices(opts.services);
  const routes = apiRoutes(services, { sseHeartbeatMs: opts.sseHeartbeatMs, broadcast, viewerToken, warm: opts.warm });
  const notice =
    typeof opts.terminalNotice === 'function'
      ? opts.terminalNotice
      : opts.terminalNotice
        ? sharedRead((mode: Mode, signal: AbortSignal) => terminalNotice(mode, services.clusters, signal), NOTICE_FRESH_MS)
        : undefined;
  // Answer with our protocol only: the client's second subprotocol is the token, never echoed.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: TERMINAL_LIMITS.maxPayloadBytes,
    handleProtocols: (offered) => (offered.has(TERMINAL_SUBPROTOCOL) ? TERMINAL_SUBPROTOCOL : false),
  });
  const guesses = new GuessLimiter();
  // A seat's shells run as the seat's own user (terminals/shell-user.ts): a cluster that comes
  // up while a shell is open gets a kubeconfig that shell can read too.
  const user = shellUser();
  // Not root, or no setpriv: say so at start, not at the learner's first terminal.
  if (user) dropTo(user);
  // Relays a runner killed mid-solve left behind are nobody's now (docker-relay.ts).
  if (user) sweepDockerRelays();
  const handingOver = user
    ? services.clusters.events.on((e) => {
        if (e.type !== 'status' || e.status.state !== 'ready') return;
        try {
          handOver(kubeconfigPath(e.mode), user);
        } catch (err) {
          console.error(`[dplab] could not hand ${kubeconfigPath(e.mode)} to the seat's shell user:`, err);
        }
      })
    : undefined;
  /** One per open terminal session, settled when its shell and everything it started have ended. */
  const sessions = new Set<Promise<void>>();
  const hostsFor = (req: IncomingMessage) => allowedHosts(localPort(req), opts.extraHosts ?? []);

  /**
   * The gate, plus the guess limit: a wrong token while guessing is on hold gets 429 (not 401);
   * the right one always passes, so nobody's wrong tokens lock the owner out (guess-limit.ts).
   */
  function authorize(req: IncomingMessage, input: Omit<GateInput, 'host' | 'origin' | 'token'>): GateResult {
    const given = requestToken(req);
    const hosts = hostsFor(req);
    const verdict = gate({ ...input, host: req.headers.host, origin: req.headers.origin, token: given }, token, hosts, viewerToken);
    if (verdict.ok || verdict.status !== 401 || given === undefined) return verdict;
    const wait = guesses.blockedFor();
    if (wait > 0) return { ok: false, status: 429, message: onHold(wait), retryAfterSeconds: wait };
    guesses.wrongGuess();
    return verdict;
  }

  async function api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const found = matchRoute(routes, method, url.pathname);
    const route = found && 'route' in found ? found.route : null;
    const verdict = authorize(req, { method, isUpgrade: false, needsToken: !route?.public });
    if (!verdict.ok) {
      if (verdict.retryAfterSeconds) res.setHeader('retry-after', String(verdict.retryAfterSeconds));
      return sendJson(res, verdict.status, { error: { message: verdict.message } });
    }
    if (!found) return sendJson(res, 404, { error: { message: `No API route ${method} ${url.pathname}.` } });
    if (!('route' in found)) {
      res.setHeader('allow', found.allowed.join(', '));
      return sendJson(res, 405, { error: { message: `${method} is not allowed here; use ${found.allowed.join(' or ')}.` } });
    }
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    try {
      const body = method === 'POST' || method === 'PUT' ? await readJsonBody(req) : undefined;
      await found.route.handler(req, res, { url, params: found.params, body, signal: controller.signal });
    } catch (err) {
      if (!(err instanceof DplabError)) console.error('[dplab] API error', err);
      sendError(res, err);
    }
  }

  return {
    token,
    viewerToken,
    broadcast,
    get openTerminals() {
      return sessions.size;
    },
    handle(req, res, next) {
      let url: URL;
      try {
        url = new URL(req.url ?? '/', 'http://runner.invalid');
      } catch {
        return sendJson(res, 400, { error: { message: 'Malformed request URL.' } });
      }
      if (url.pathname === '/api' || url.pathname.startsWith('/api/')) {
        void api(req, res, url);
        return;
      }
      // Pages: refuse foreign Host names (DNS rebinding).
      if (
        !gate(
          { method: 'GET', host: req.headers.host, origin: undefined, token: undefined, isUpgrade: false, needsToken: false },
          token,
          hostsFor(req),
        ).ok
      ) {
        res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', ...pageHeaders() });
        res.end('This runner only answers to its own loopback address.\n');
        return;
      }
      // Old `?token=` links keep working: moved into the fragment, which the browser keeps to
      // itself, and no cookie. The token was in this one request line to us; never again.
      const given = url.searchParams.get('token');
      if (given !== null && (req.method === 'GET' || req.method === 'HEAD')) {
        if (!tokensEqual(given, token)) {
          const wait = guesses.blockedFor();
          if (wait > 0) {
            res.writeHead(429, { 'content-type': 'text/plain; charset=utf-8', 'retry-after': String(wait) });
            res.end(`${onHold(wait)}\n`);
            return;
          }
          guesses.wrongGuess();
          return tokenPage(res);
        }
        url.searchParams.delete('token');
        res.writeHead(302, {
          location: `${url.pathname}${url.search}#token=${token}`,
          'cache-control': 'no-store',
          'referrer-policy': 'no-referrer',
        });
        res.end();
        return;
      }
      next();
    },
    handleUpgrade(req, socket, head) {
      let url: URL;
      try {
        url = new URL(req.url ?? '/', 'http://runner.invalid');
      } catch {
        return false;
      }
      if (url.pathname === WATCH_PATH) {
        const watchVerdict = authorize(req, { method: 'GET', isUpgrade: true, needsToken: true, viewerAllowed: true });
        if (!watchVerdict.ok) refuseUpgrade(socket, watchVerdict.status, watchVerdict.message);
        else wss.handleUpgrade(req, socket, head, (ws) => attachWatcher(ws, broadcast));
        return true;
      }
      if (url.pathname !== TERMINAL_PATH) return false;
      const verdict = authorize(req, { method: 'GET', isUpgrade: true, needsToken: true });
      if (!verdict.ok) {
        refuseUpgrade(socket, verdict.status, verdict.message);
        return true;
      }
      const modeParam = url.searchParams.get('mode');
      if (modeParam !== null && modeParam !== '' && !isMode(modeParam)) {
        refuseUpgrade(socket, 400, `Unknown mode "${modeParam.slice(0, 40)}".`);
        return true;
      }
      const mode = modeParam && isMode(modeParam) ? modeParam : null;
      const size = sizeFromQuery(url.searchParams);
      const node = url.searchParams.get('node');
      const accept = (nodeShell?: readonly string[]) =>
        wss.handleUpgrade(req, socket, head, (ws) => {
          // Past the gate, so the page can be told why in words (an HTTP refusal it cannot read).
          const open = sessions.size;
          if (open >= maxTerminals) {
            refuseTerminal(
              ws,
              `This runner already has ${open} terminal${open === 1 ? '' : 's'} open (the limit is ${maxTerminals}). Close a terminal tab, or start the runner with --max-terminals N.`,
            );
            return;
          }
          let ended!: () => void;
          const gone = new Promise<void>((resolve) => (ended = resolve));
          sessions.add(gone);
          attachTerminal(ws, {
            ...size,
            mode,
            nodeShell,
            // The cluster's own programs first on the shell's PATH (the sim's kubectl and `docker exec`).
            pathFirst: mode ? clusterHandle(mode).pathFirst : undefined,
            nodeName: nodeShell ? (node ?? undefined) : undefined,
            notice,
            broadcast,
            onSessionEnd: () => {
              sessions.delete(gone);
              ended();
            },
          });
        });
      if (node === null || node === '') {
        accept();
        return true;
      }
      // A node shell: the name must be one of the mode's cluster's nodes, never a free-form argv.
      void nodeShellFor(mode, node).then(
        (argv) => accept(argv),
        (err: DplabError) => refuseUpgrade(socket, err.status ?? 400, err.message),
      );
      return true;
    },
    async close() {
      handingOver?.();
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      // A shell still ending may write (bash saves its history on SIGHUP) into the state folder
      // that whoever closed the runner removes next: closed means none of them is left.
      await Promise.all(sessions);
    },
  };
}
