/**
 * The runner's side of the security contract (security.ts) at its door: the tokens it starts
 * with, the gate with the guess limit in front of every API call and socket, and what a page
 * request gets (a foreign Host refused, an old `?token=` link moved into the fragment).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DplabError } from '../base/errors.ts';
import { GuessLimiter } from './guess-limit.ts';
import { pageHeaders } from './page-policy.ts';
import {
  allowedHosts,
  gate,
  generateToken,
  requestToken,
  tokensEqual,
  weakTokenReason,
  type GateInput,
  type GateResult,
} from './security.ts';

/** The runner's token and the viewer's, both strong and different, or a DplabError saying why not. */
export function checkedTokens(opts: { token: string; viewerToken?: string }): { token: string; viewerToken: string } {
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
  return { token, viewerToken };
}

export interface RunnerGate {
  /**
   * The gate, plus the guess limit: a wrong token while guessing is on hold gets 429 (not 401);
   * the right one always passes, so nobody's wrong tokens lock the owner out (guess-limit.ts).
   */
  authorize(req: IncomingMessage, input: Omit<GateInput, 'host' | 'origin' | 'token'>): GateResult;
  /** A page request: refused (answered) when its Host is foreign or its `?token=` is moved; else `next()`. */
  answerPage(req: IncomingMessage, res: ServerResponse, url: URL, next: () => void): void;
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

export function createRunnerGate(token: string, viewerToken: string, extraHosts: readonly string[]): RunnerGate {
  const guesses = new GuessLimiter();
  const hostsFor = (req: IncomingMessage) => allowedHosts(localPort(req), extraHosts);

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

  function answerPage(req: IncomingMessage, res: ServerResponse, url: URL, next: () => void): void {
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
    if (given === null || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
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
  }

  return { authorize, answerPage };
}
