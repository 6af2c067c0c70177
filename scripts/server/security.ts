/**
 * The runner hands out a shell, so every request proves three things: it comes with our token
 * (cookie or bearer), it is addressed to our own loopback name and port (no DNS rebinding),
 * and, for WebSocket upgrades and state-changing requests, it comes from our own page (Origin).
 */
import { randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const TOKEN_BYTES = 24;
const COOKIE_PREFIX = 'dplab_token_';

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

/** Cookies are not port-scoped, so the name carries the port: two runners do not clobber each other. */
export function cookieName(port: number): string {
  return `${COOKIE_PREFIX}${port}`;
}

export function tokenCookie(port: number, token: string): string {
  return `${cookieName(port)}=${token}; HttpOnly; SameSite=Strict; Path=/`;
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return out;
}

/** The token a request carries: `Authorization: Bearer …` first, else our cookie. */
export function requestToken(req: Pick<IncomingMessage, 'headers'>, port: number): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  return parseCookies(req.headers.cookie).get(cookieName(port));
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

export type GateResult = { ok: true } | { ok: false; status: 401 | 403; message: string };

export interface GateInput {
  method: string;
  host: string | undefined;
  origin: string | undefined;
  token: string | undefined;
  /** Upgrades always need a matching Origin; so do non-GET requests. */
  isUpgrade: boolean;
  /** `GET /api/health` is the one open route. */
  needsToken: boolean;
}

/** One decision for every API request and upgrade. */
export function gate(input: GateInput, expectedToken: string, allowed: Set<string>): GateResult {
  if (!hostAllowed(input.host, allowed)) {
    return { ok: false, status: 403, message: `This runner only answers to ${[...allowed].join(', ')}; the request was addressed to "${input.host ?? ''}".` };
  }
  const safeMethod = input.method === 'GET' || input.method === 'HEAD';
  if ((input.isUpgrade || !safeMethod) && !originAllowed(input.origin, input.host, allowed)) {
    return { ok: false, status: 403, message: `Cross-origin request refused (Origin "${input.origin ?? 'missing'}").` };
  }
  if (input.needsToken && !tokensEqual(input.token, expectedToken)) {
    return { ok: false, status: 401, message: 'Missing or wrong token. Open the course with the URL the runner printed (…/?token=…).' };
  }
  return { ok: true };
}
