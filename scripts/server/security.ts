/**
 * The runner hands out a shell, so every request proves three things: it comes with our token
 * (bearer header, or subprotocol on the terminal socket), it is addressed to our own loopback name and port (no DNS rebinding),
 * and, for WebSocket upgrades and state-changing requests, it comes from our own page (Origin).
 */
import { randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const TOKEN_BYTES = 24;

export function generateToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/** Constant-time comparison; hashing first makes lengths equal so length does not leak either. */
export function tokensEqual(given: string | undefined | null, expected: string): boolean {
  if (typeof given !== 'string' || given.length === 0 || expected.length === 0) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * How a WebSocket upgrade carries the token: as a second subprotocol next to the real one.
 * A browser's WebSocket cannot set headers, and the alternative, a first frame, would mean
 * accepting the upgrade before we know who is asking; with the subprotocol the gate refuses
 * before any upgrade, exactly as for the API. The server answers with TERMINAL_SUBPROTOCOL
 * only, so the token is never echoed back. Base64url and hex tokens are valid protocol tokens.
 */
export const TERMINAL_SUBPROTOCOL = 'dplab.v1';
export const TOKEN_SUBPROTOCOL_PREFIX = 'dplab.token.';

function subprotocols(header: string | string[] | undefined): string[] {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  return text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

/**
 * The token a request carries: `Authorization: Bearer …`, or on an upgrade the
 * `dplab.token.…` subprotocol. Never a cookie, never the query string: the token must not
 * travel anywhere the browser would send it on its own.
 */
export function requestToken(req: Pick<IncomingMessage, 'headers'>): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  const proto = subprotocols(req.headers['sec-websocket-protocol']).find((p) => p.startsWith(TOKEN_SUBPROTOCOL_PREFIX));
  return proto?.slice(TOKEN_SUBPROTOCOL_PREFIX.length);
}

/** Roughly how many bits a token of this length and alphabet carries. */
function tokenBits(token: string): number {
  const perChar = /^[0-9a-f]*$/i.test(token) ? 4 : /^[A-Za-z0-9_-]*$/.test(token) ? 6 : 6.5;
  return Math.floor(token.length * perChar);
}

const MIN_TOKEN_BITS = 128;

/**
 * A chosen DPLAB_TOKEN must be as strong as a generated one. We refuse, not warn: a warning
 * scrolls away, and a short token is a shell for anyone on this machine who guesses it.
 */
export function weakTokenReason(token: string): string | null {
  if (!/^[A-Za-z0-9._~-]+$/.test(token))
    return 'DPLAB_TOKEN may only use letters, digits and . _ ~ - (it travels in a URL fragment and a WebSocket subprotocol).';
  const bits = tokenBits(token);
  if (bits < MIN_TOKEN_BITS) {
    return `DPLAB_TOKEN is too short: about ${bits} bits, at least ${MIN_TOKEN_BITS} are needed (22+ base64url characters or 32+ hex digits).`;
  }
  return null;
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * The Host values we answer to: loopback names with the port the connection arrived on, plus
 * the address we were asked to bind (`--host`) for a classroom setup.
 */
export function allowedHosts(port: number, extraNames: readonly string[] = []): Set<string> {
  const names = new Set([...LOOPBACK_NAMES, ...extraNames.filter((n) => n && n !== '0.0.0.0' && n !== '::')]);
  return new Set([...names].map((n) => `${n.includes(':') && !n.startsWith('[') ? `[${n}]` : n}:${port}`.toLowerCase()));
}

export function hostAllowed(hostHeader: string | undefined, allowed: Set<string>): boolean {
  return typeof hostHeader === 'string' && allowed.has(hostHeader.toLowerCase());
}

/** The Origin must be exactly our own origin (scheme, host and port), compared as whole strings. */
export function originAllowed(originHeader: string | undefined, hostHeader: string | undefined, allowed: Set<string>): boolean {
  if (typeof originHeader !== 'string' || !hostAllowed(hostHeader, allowed)) return false;
  return originHeader === `http://${hostHeader!.toLowerCase()}`;
}

export type GateResult = { ok: true } | { ok: false; status: 401 | 403 | 429; message: string; retryAfterSeconds?: number };

export interface GateInput {
  method: string;
  host: string | undefined;
  origin: string | undefined;
  token: string | undefined;
  /** Upgrades always need a matching Origin; so do non-GET requests. */
  isUpgrade: boolean;
  /** `GET /api/health` is the one open route. */
  needsToken: boolean;
  /** The terminal watch socket also takes the read-only viewer token; nothing else does. */
  viewerAllowed?: boolean;
}

/**
 * One decision for every API request and upgrade. `viewerToken` is the presenter's read-only
 * credential: it passes only where the input says `viewerAllowed` (the watch socket).
 */
export function gate(input: GateInput, expectedToken: string, allowed: Set<string>, viewerToken?: string): GateResult {
  if (!hostAllowed(input.host, allowed)) {
    return {
      ok: false,
      status: 403,
      message: `This runner only answers to ${[...allowed].join(', ')}; the request was addressed to "${input.host ?? ''}".`,
    };
  }
  const safeMethod = input.method === 'GET' || input.method === 'HEAD';
  if ((input.isUpgrade || !safeMethod) && !originAllowed(input.origin, input.host, allowed)) {
    return { ok: false, status: 403, message: `Cross-origin request refused (Origin "${input.origin ?? 'missing'}").` };
  }
  const viewer = input.viewerAllowed === true && viewerToken !== undefined && tokensEqual(input.token, viewerToken);
  if (input.needsToken && !viewer && !tokensEqual(input.token, expectedToken)) {
    return {
      ok: false,
      status: 401,
      message: 'Missing or wrong token. Open the course with the link the runner printed (http://127.0.0.1:…/#token=…).',
    };
  }
  return { ok: true };
}
