/**
 * The router of the runner's JSON API and the portal's: path patterns, the JSON answer and body,
 * the request's URL and abort signal. Route modules (scripts/server/routes/*.ts) export `Route`s;
 * the server applies the security gate before any route runs. Part of the server core
 * (scripts/server/core/), which imports no lab.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DplabError, errorToJson } from '../../base/errors.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface RouteContext {
  url: URL;
  params: Record<string, string>;
  /** The parsed JSON body of a POST/PUT (undefined when empty). */
  body: unknown;
  /** Aborted when the client goes away, so long work (a check, a provisioning wait) can stop early. */
  signal: AbortSignal;
}

export interface Route {
  method: Method;
  /** `/api/labs/:lab/steps/:step/check`: segments starting with ':' capture. */
  path: string;
  /** Only `GET /api/health` sets this. */
  public?: boolean;
  handler(req: IncomingMessage, res: ServerResponse, ctx: RouteContext): Promise<void> | void;
}

/** Bodies are small JSON documents; anything larger is refused before it is buffered. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * The params of `pathname` when it has the shape of `pattern` (`/api/labs/:lab/reset`: segments
 * starting with ':' capture, decoded), else null; a segment that is not valid percent-encoding
 * matches nothing.
 */
export function matchPath(pattern: string, pathname: string): Record<string, string> | null {
  const parts = pathname.split('/').filter(Boolean);
  const segments = pattern.split('/').filter(Boolean);
  if (segments.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    if (segments[i].startsWith(':')) {
      try {
        params[segments[i].slice(1)] = decodeURIComponent(parts[i]);
      } catch {
        return null;
      }
    } else if (segments[i] !== parts[i]) return null;
  }
  return params;
}

export function matchRoute<R extends { method: Method; path: string } = Route>(
  routes: readonly R[],
  method: string,
  pathname: string,
): { route: R; params: Record<string, string> } | { allowed: Method[] } | null {
  const allowed: Method[] = [];
  for (const route of routes) {
    const params = matchPath(route.path, pathname);
    if (!params) continue;
    if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { route, params };
    allowed.push(route.method);
  }
  return allowed.length ? { allowed } : null;
}

/** The request's URL, or null when its target is not one (the caller answers 400 or refuses). */
export function requestUrl(req: IncomingMessage): URL | null {
  try {
    return new URL(req.url ?? '/', 'http://server.invalid');
  } catch {
    return null;
  }
}

/** Aborted when the client goes away, so long work (a check, an event stream) can stop early. */
export function requestSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.on('close', () => controller.abort());
  return controller.signal;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** A gate's refusal as the API shows it, runner and portal alike: its status, `retry-after` when it says one, its message. */
export function sendRefusal(res: ServerResponse, verdict: { status: number; message: string; retryAfterSeconds?: number }): void {
  if (verdict.retryAfterSeconds) res.setHeader('retry-after', String(verdict.retryAfterSeconds));
  sendJson(res, verdict.status, { error: { message: verdict.message } });
}

/** An error as the API shows it: `{ error: { message, fix?, details? } }` with its status. */
export function sendError(res: ServerResponse, err: unknown): void {
  const status = err instanceof DplabError ? err.status : 500;
  sendJson(res, status, { error: errorToJson(err) });
}

export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new DplabError(`Request body larger than ${MAX_BODY_BYTES} bytes.`, { status: 413 });
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return undefined;
  const ct = req.headers['content-type'] ?? '';
  if (!/^application\/json\b/i.test(ct))
    throw new DplabError('Request bodies must be JSON (Content-Type: application/json).', { status: 415 });
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new DplabError('Request body is not valid JSON.', { status: 400 });
  }
}
