/**
 * How a seat backend talks to a seat's runner: its open /api/health, and the token-guarded
 * routes it calls on the learner's behalf (bring a warm cluster up, delete the clusters before
 * the seat goes). Each request names the seat's own Host and Origin, as the runner's security
 * gate demands, and has a timeout: a seat that hangs never holds the portal.
 */
import { request } from 'node:http';
import { MODES, type Mode } from '../wire/modes.ts';
import type { SeatEndpoint } from './seat-backend.ts';

export interface SeatRunnerRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** Bearer token; the one open route (/api/health) needs none. */
  token?: string;
  body?: unknown;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface SeatRunnerResponse {
  status: number;
  body: string;
}

/** Sends one request to a seat's runner. Tests pass their own (a runner on loopback, a recorder). */
export type SeatRunnerTransport = (endpoint: SeatEndpoint, req: SeatRunnerRequest) => Promise<SeatRunnerResponse>;

export const HEALTH_TIMEOUT_MS = 3_000;
export const WARM_TIMEOUT_MS = 10_000;
/** Deleting a kind cluster takes seconds; three modes' worth, and then the seat goes anyway. */
export const DELETE_CLUSTERS_TIMEOUT_MS = 60_000;

/**
 * Over node:http to endpoint.url, with Host set to endpoint.host. `connectTo` replaces only
 * where the socket goes (a test's runner on 127.0.0.1), never the Host the runner sees.
 */
export function httpTransport(connectTo?: (endpoint: SeatEndpoint) => { hostname: string; port: number }): SeatRunnerTransport {
  return (endpoint, r) =>
    new Promise((resolve, reject) => {
      const url = new URL(r.path, endpoint.url);
      const target = connectTo?.(endpoint) ?? { hostname: url.hostname, port: Number(url.port || 80) };
      const payload = r.body === undefined ? undefined : JSON.stringify(r.body);
      const headers: Record<string, string> = { host: endpoint.host, accept: 'application/json' };
      if (r.token) headers.authorization = `Bearer ${r.token}`;
      if (r.method !== 'GET') headers.origin = `http://${endpoint.host}`;
      if (payload !== undefined) headers['content-type'] = 'application/json';
      const req = request(
        { hostname: target.hostname, port: target.port, path: url.pathname + url.search, method: r.method, headers, signal: r.signal },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            if (body.length < 64 * 1024) body += d;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          res.on('error', reject);
        },
      );
      req.setTimeout(r.timeoutMs, () => req.destroy(new Error(`${endpoint.url}${r.path} did not answer within ${r.timeoutMs} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
}

/** True when the runner answers its health route as a Dataplane Lab runner. */
export async function runnerHealthy(transport: SeatRunnerTransport, endpoint: SeatEndpoint): Promise<boolean> {
  try {
    const res = await transport(endpoint, { method: 'GET', path: '/api/health', timeoutMs: HEALTH_TIMEOUT_MS });
    return res.status === 200 && (JSON.parse(res.body) as { ok?: unknown }).ok === true;
  } catch {
    return false;
  }
}

/** Ask the runner to bring the warm modes' clusters up (it answers 202 and provisions on its own). */
export async function warmClusters(
  transport: SeatRunnerTransport,
  endpoint: SeatEndpoint,
  token: string,
  modes: readonly Mode[],
): Promise<void> {
  for (const mode of modes) {
    const res = await transport(endpoint, {
      method: 'POST',
      path: `/api/clusters/${mode}/up`,
      token,
      body: {},
      timeoutMs: WARM_TIMEOUT_MS,
    });
    if (res.status !== 202 && res.status !== 200)
      throw new Error(`the seat's runner refused to bring ${mode} up: HTTP ${res.status} ${res.body.slice(0, 200)}`);
  }
}

/**
 * Best effort: every mode's cluster deleted through the runner before its pod goes, so no kind
 * node container outlives the seat's accounting. Returns what could not be done, in words.
 */
export async function deleteSeatClusters(
  transport: SeatRunnerTransport,
  endpoint: SeatEndpoint,
  token: string,
  signal?: AbortSignal,
): Promise<string[]> {
  const deadline = AbortSignal.timeout(DELETE_CLUSTERS_TIMEOUT_MS);
  const both = signal ? AbortSignal.any([signal, deadline]) : deadline;
  const problems: string[] = [];
  for (const mode of MODES) {
    try {
      const res = await transport(endpoint, {
        method: 'DELETE',
        path: `/api/clusters/${mode}`,
        token,
        timeoutMs: DELETE_CLUSTERS_TIMEOUT_MS,
        signal: both,
      });
      if (res.status >= 400) problems.push(`${mode}: HTTP ${res.status}`);
    } catch (err) {
      problems.push(`${mode}: ${(err as Error).message}`);
      if (both.aborted) break;
    }
  }
  return problems;
}
