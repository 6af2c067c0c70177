/**
 * The runner: the API, the terminal WebSocket and the security contract, as one module that
 * both `astro dev` (through the integration) and `dplab serve` mount. Never two copies.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { isMode, type Mode } from '../clusters/modes.ts';
import { allowedHosts, gate, requestToken, tokenCookie, tokensEqual } from './security.ts';
import { matchRoute, readJsonBody, sendError, sendJson } from './router.ts';
import { apiRoutes } from './routes/index.ts';
import { terminalNotice } from './terminal-notice.ts';
import { runnerServices, type RunnerServices } from '../runner/services.ts';
import { attachTerminal } from './terminal-socket.ts';
import { sizeFromQuery, TERMINAL_LIMITS } from '../terminals/protocol.ts';
import { DplabError } from '../errors.ts';
import { nodeShellFor } from './node-shell.ts';

export const TERMINAL_PATH = '/api/terminal';

export interface RunnerOptions {
  token: string;
  /** Names besides loopback that this runner answers to (the --host it was bound to). */
  extraHosts?: readonly string[];
  /**
   * Lab terminals print a notice when their cluster is not ready: `true` reads it from the cluster
   * service's status; a function replaces that reading (tests use one to delay the notice).
   */
  terminalNotice?: boolean | ((mode: Mode) => Promise<string | null>);
  /** The services the routes run on; tests replace the parts they play. */
  services?: Partial<RunnerServices>;
  /** The event stream's keep-alive interval (tests shorten it). */
  sseHeartbeatMs?: number;
}

export interface Runner {
  readonly token: string;
  /** Connect-style handler: API routes and the `?token=` exchange; anything else goes to `next`. */
  handle(req: IncomingMessage, res: ServerResponse, next: () => void): void;
  /** Takes the upgrade when it is ours (returns true), leaves other upgrades (Vite HMR) alone. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Open terminal sessions, for tests and the status line. */
  readonly openTerminals: number;
  close(): Promise<void>;
}

function localPort(req: IncomingMessage): number {
  return req.socket.localPort ?? 0;
}

function refuseUpgrade(socket: Duplex, status: number, message: string): void {
  const reason = status === 401 ? 'Unauthorized' : status === 403 ? 'Forbidden' : status === 404 ? 'Not Found' : 'Bad Request';
  const body = `${message}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function tokenPage(res: ServerResponse): void {
  const html = `<!doctype html><meta charset="utf-8"><title>Dataplane Lab: wrong token</title>
<body style="font-family:system-ui;max-width:40rem;margin:4rem auto;line-height:1.5">
<h1>This link's token does not match the running runner</h1>
<p>Each time the runner starts it prints a fresh link. Open the line that starts with
<code>Dataplane Lab: http://127.0.0.1:…/?token=…</code> in the terminal where you ran <code>npm start</code>.</p>
<p>To keep one token across restarts, start it with <code>DPLAB_TOKEN=&lt;your token&gt; npm start</code>.</p></body>`;
  res.writeHead(401, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(html);
}

export function createRunner(opts: RunnerOptions): Runner {
  const { token } = opts;
  // The composition root: every route and the terminal notice run on these services.
  const services = runnerServices(opts.services);
  const routes = apiRoutes(services, { sseHeartbeatMs: opts.sseHeartbeatMs });
  const notice =
    typeof opts.terminalNotice === 'function'
      ? opts.terminalNotice
      : opts.terminalNotice
        ? (mode: Mode) => terminalNotice(mode, services.clusters)
        : undefined;
  const wss = new WebSocketServer({ noServer: true, maxPayload: TERMINAL_LIMITS.maxPayloadBytes });
  let open = 0;
  const hostsFor = (req: IncomingMessage) => allowedHosts(localPort(req), opts.extraHosts ?? []);

  async function api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const found = matchRoute(routes, method, url.pathname);
    const route = found && 'route' in found ? found.route : null;
    const verdict = gate(
      { method, host: req.headers.host, origin: req.headers.origin, token: requestToken(req, localPort(req)), isUpgrade: false, needsToken: !route?.public },
      token,
      hostsFor(req),
    );
    if (!verdict.ok) return sendJson(res, verdict.status, { error: { message: verdict.message } });
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
    get openTerminals() {
      return open;
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
      // Pages: refuse foreign Host names (DNS rebinding) and exchange ?token= for the cookie.
      if (!gate({ method: 'GET', host: req.headers.host, origin: undefined, token: undefined, isUpgrade: false, needsToken: false }, token, hostsFor(req)).ok) {
        res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('This runner only answers to its own loopback address.\n');
        return;
      }
      const given = url.searchParams.get('token');
      if (given !== null && (req.method === 'GET' || req.method === 'HEAD')) {
        if (!tokensEqual(given, token)) return tokenPage(res);
        url.searchParams.delete('token');
        res.writeHead(302, { 'set-cookie': tokenCookie(localPort(req), token), location: `${url.pathname}${url.search}${url.hash}`, 'cache-control': 'no-store' });
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
      if (url.pathname !== TERMINAL_PATH) return false;
      const verdict = gate(
        { method: 'GET', host: req.headers.host, origin: req.headers.origin, token: requestToken(req, localPort(req)), isUpgrade: true, needsToken: true },
        token,
        hostsFor(req),
      );
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
      const accept = (nodeShell?: readonly string[]) =>
        wss.handleUpgrade(req, socket, head, (ws) => {
          open++;
          attachTerminal(ws, { ...size, mode, nodeShell, notice, onSessionEnd: () => open-- });
        });
      const node = url.searchParams.get('node');
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
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
