/**
 * How the page proves itself to the runner. The token arrives in the link's fragment
 * (`/#token=…`: browsers never send fragments, not in a request line, not in a Referer),
 * /dplab-token.js moves it into this origin's localStorage on every page, and this module
 * sends it explicitly and only to our own origin: `Authorization: Bearer` on fetches, a
 * `dplab.token.…` subprotocol on the terminal socket. No cookie: cookies ignore ports, so a
 * cookie for 127.0.0.1 would go to every local web server the learner visits.
 *
 * Everything else that talks to the runner goes through runnerFetch / openRunnerSocket.
 */

/** Same key as site/public/dplab-token.js, which runs first on every page. */
const TOKEN_STORAGE_KEY = 'dplab.token';
/** Keep in step with TERMINAL_SUBPROTOCOL and TOKEN_SUBPROTOCOL_PREFIX in scripts/server/security.ts. */
const TERMINAL_SUBPROTOCOL = 'dplab.v1';
const TOKEN_SUBPROTOCOL_PREFIX = 'dplab.token.';

function storages(): Storage[] {
  const out: Storage[] = [];
  for (const get of [() => localStorage, () => sessionStorage]) {
    try {
      out.push(get());
    } catch {
      // storage disabled for this origin
    }
  }
  return out;
}

export function runnerToken(): string | null {
  for (const s of storages()) {
    const t = s.getItem(TOKEN_STORAGE_KEY);
    if (t) return t;
  }
  return null;
}

/** The runner said 401: this token is stale (a restart); the next printed link brings a new one. */
function forgetRunnerToken(): void {
  for (const s of storages()) s.removeItem(TOKEN_STORAGE_KEY);
}

/** Only our own origin ever gets the token; anything else is a programming error. */
function sameOrigin(path: string): URL {
  const url = new URL(path, location.href);
  if (url.origin !== location.origin) throw new Error(`Refusing to send the runner token to ${url.origin}.`);
  return url;
}

/** fetch() to the runner with the token; a 401 forgets the stored token. */
export async function runnerFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const url = sameOrigin(path);
  const headers = new Headers(init.headers);
  const token = runnerToken();
  if (token) headers.set('authorization', `Bearer ${token}`);
  const res = await fetch(url, { ...init, headers, credentials: 'omit', referrerPolicy: 'no-referrer' });
  if (res.status === 401 && token) forgetRunnerToken();
  return res;
}

/**
 * A WebSocket to the runner (`/api/terminal?…`), carrying the token as a subprotocol: the
 * runner token, or another credential the caller holds (the viewer token of a watch link).
 */
export function openRunnerSocket(path: string, token: string | null = runnerToken()): WebSocket {
  const url = sameOrigin(path);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return new WebSocket(url, token ? [TERMINAL_SUBPROTOCOL, `${TOKEN_SUBPROTOCOL_PREFIX}${token}`] : [TERMINAL_SUBPROTOCOL]);
}
