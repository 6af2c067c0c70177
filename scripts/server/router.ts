/**
 * A tiny router for the runner's JSON API. Route modules (scripts/server/routes/*.ts) export
 * `Route`s; the server applies the security gate before any route runs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DplabError, errorToJson } from '../base/errors.ts';

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

export function matchRoute(
  routes: readonly Route[],
  method: string,
  pathname: string,
): { route: Route; params: Record<string, string> } | { allowed: Method[] } | null {
  const parts = pathname.split('/').filter(Boolean);
  const allowed: Method[] = [];
  for (const route of routes) {
    const pattern = route.path.split('/').filter(Boolean);
    if (pattern.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < pattern.length && ok; i++) {
      if (pattern[i].startsWith(':')) {
        try {
          params[pattern[i].slice(1)] = decodeURIComponent(parts[i]);
        } catch {
          ok = false;
        }
      } else ok = pattern[i] === parts[i];
    }
    if (!ok) continue;
    if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { route, params };
    allowed.push(route.method);
  }
  return allowed.length ? { allowed } : null;
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
