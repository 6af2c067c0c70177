/**
 * The portal's own calls to a seat's runner (is it up, warm its clusters, read its activity,
 * delete its clusters), with the seat's runner token and the Host and Origin the runner
 * demands. Both seat backends and the dashboard's watcher use it; learners' requests go through
 * forward.ts. Every answer is validated against the wire schemas, and every request has a
 * timeout: a seat that hangs never holds the portal.
 */
import { request } from 'node:http';
import { z } from '../wire/zod.ts';
import { DplabError } from '../base/errors.ts';
import { activityClusterSchema, activitySchema, type Activity, type ActivityCluster } from '../wire/activity.ts';
import { clusterListSchema, clusterStartSchema, clusterStatusSchema, type ClusterStatus } from '../wire/clusters.ts';
import { MODES, type Mode } from '../wire/modes.ts';
import { describeIssues } from '../wire/validate.ts';
import type { SeatEndpoint } from './seat-backend.ts';

const DEFAULT_TIMEOUT_MS = 10_000;
/** One health read: a runner that is up answers at once. */
const HEALTH_TIMEOUT_MS = 3_000;
/** Deleting a kind cluster takes seconds; every mode's worth, and then the seat goes anyway. */
const BEST_EFFORT_DELETE_MS = 60_000;
/** Answers larger than this are not a runner's. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** The activity stream carries a heartbeat every 15 s (SSE_HEARTBEAT_MS); three missed ones end it. */
const STREAM_SILENT_MS = 45_000;

/** Server-Sent Events, as the runner writes them (`event:` and one `data:` line per event, comments for heartbeats). */
class EventStreamParser {
  #buffer = '';

  push(text: string): { event: string; data: string }[] {
    this.#buffer += text;
    if (this.#buffer.length > MAX_BODY_BYTES) throw new DplabError("The seat's runner sent an event larger than 4 MiB.", { status: 502 });
    const out: { event: string; data: string }[] = [];
    for (let end = this.#buffer.indexOf('\n\n'); end >= 0; end = this.#buffer.indexOf('\n\n')) {
      const block = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length) out.push({ event, data: data.join('\n') });
    }
    return out;
  }
}

function parseEvent<S extends z.ZodMiniType>(schema: S, e: { event: string; data: string }): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(e.data);
  } catch {
    throw new DplabError(`The seat's runner sent a "${e.event}" event that is not JSON.`, { status: 502 });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw new DplabError(`The seat's runner sent a "${e.event}" event in an unexpected shape: ${describeIssues(parsed.error)}.`, {
      status: 502,
    });
  return parsed.data;
}

export interface SeatCallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** One request as it goes on the wire: SeatClient has already set every header. */
export interface SeatRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** How long the runner may be silent (the whole answer, or between a stream's pieces). */
  timeoutMs: number;
  signal?: AbortSignal;
  /** A stream: a 2xx answer's body goes here piece by piece as it arrives (the response's body stays empty). */
  onData?: (piece: Buffer) => void;
}

export interface SeatResponse {
  status: number;
  body: string;
}

/** Sends one request to a seat's runner. Tests pass their own (a recorder, or httpTransport to a runner on loopback). */
export type SeatTransport = (endpoint: SeatEndpoint, req: SeatRequest) => Promise<SeatResponse>;

/**
 * Over node:http to endpoint.url. `connectTo` replaces only where the socket goes (a test's
 * runner on 127.0.0.1), never the Host header the runner sees.
 */
export function httpTransport(connectTo?: (endpoint: SeatEndpoint) => { hostname: string; port: number }): SeatTransport {
  return (endpoint, r) =>
    new Promise((resolve, reject) => {
      const url = new URL(r.path, endpoint.url);
      const target = connectTo?.(endpoint) ?? { hostname: url.hostname, port: Number(url.port || 80) };
      const req = request(
        {
          hostname: target.hostname,
          port: target.port,
          path: url.pathname + url.search,
          method: r.method,
          headers: r.headers,
          signal: r.signal,
        },
        (res) => {
          const status = res.statusCode ?? 0;
          if (r.onData && status >= 200 && status < 300) {
            res.on('data', r.onData);
            res.on('end', () => resolve({ status, body: '' }));
            res.on('error', reject);
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_BODY_BYTES)
              req.destroy(new DplabError(`The seat's runner answered ${r.method} ${r.path} with more than 4 MiB.`, { status: 502 }));
            else chunks.push(c);
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.setTimeout(r.timeoutMs, () =>
        req.destroy(new DplabError(`The seat's runner did not answer ${r.method} ${r.path} within ${r.timeoutMs} ms.`, { status: 504 })),
      );
      req.on('error', reject);
      req.end(r.body);
    });
}

const healthSchema = z.object({ ok: z.literal(true) });

export class SeatClient {
  /** `token` may be left out by a caller that only asks /api/health, the one open route. */
  constructor(
    readonly endpoint: SeatEndpoint,
    private readonly token?: string,
    private readonly transport: SeatTransport = httpTransport(),
  ) {}

  /** One JSON call with the token; a non-2xx answer throws with the runner's own message. */
  call<S extends z.ZodMiniType>(
    method: SeatRequest['method'],
    path: string,
    schema: S,
    body?: unknown,
    opts: SeatCallOptions = {},
  ): Promise<z.output<S>> {
    return this.#send(method, path, schema, body, opts, true);
  }

  async #send<S extends z.ZodMiniType>(
    method: SeatRequest['method'],
    path: string,
    schema: S,
    body: unknown,
    opts: SeatCallOptions,
    withToken: boolean,
  ): Promise<z.output<S>> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { host: this.endpoint.host, accept: 'application/json' };
    if (withToken && this.token) headers.authorization = `Bearer ${this.token}`;
    // The runner wants its own origin on every non-GET request.
    if (method !== 'GET') headers.origin = `http://${this.endpoint.host}`;
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(payload.length) });
    const res = await this.transport(this.endpoint, {
      method,
      path,
      headers,
      body: payload,
      timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      signal: opts.signal,
    });
    let json: unknown;
    try {
      json = JSON.parse(res.body);
    } catch {
      throw new DplabError(`The seat's runner answered ${method} ${path} with something other than JSON (HTTP ${res.status}).`, {
        status: 502,
      });
    }
    if (res.status < 200 || res.status >= 300) {
      const message = (json as { error?: { message?: string } } | null)?.error?.message ?? `HTTP ${res.status}`;
      throw new DplabError(`The seat's runner refused ${method} ${path}: ${message}`, { status: 502 });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success)
      throw new DplabError(`The seat's runner answered ${method} ${path} in an unexpected shape: ${describeIssues(parsed.error)}.`, {
        status: 502,
      });
    return parsed.data;
  }

  /** The open health route, without the token; throws when the runner does not answer it as a runner. */
  async #health(opts: SeatCallOptions): Promise<void> {
    await this.#send('GET', '/api/health', healthSchema, undefined, { timeoutMs: HEALTH_TIMEOUT_MS, ...opts }, false);
  }

  /** True when the runner answers its health route as a Dataplane Lab runner. */
  async healthy(opts: SeatCallOptions = {}): Promise<boolean> {
    return this.#health(opts).then(
      () => true,
      () => false,
    );
  }

  /** Wait until the runner answers its open health route. */
  async waitHealthy(withinMs: number): Promise<void> {
    const deadline = Date.now() + withinMs;
    for (;;) {
      try {
        await this.#health({ timeoutMs: 2_000 });
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  activity(opts?: SeatCallOptions): Promise<Activity> {
    return this.call('GET', '/api/activity', activitySchema, undefined, opts);
  }

  /**
   * Follow the seat's activity stream (GET /api/activity/events): `activity` with the whole
   * activity after each change, `cluster` with one cluster's new state. Resolves when the runner
   * ends the stream, rejects when it refuses, sends what is not its events, or falls silent for
   * longer than its heartbeat allows; abort with `signal`.
   */
  async watchActivity(
    on: { activity(a: Activity): void; cluster(c: ActivityCluster): void },
    opts: { signal?: AbortSignal; silentMs?: number } = {},
  ): Promise<void> {
    const headers: Record<string, string> = { host: this.endpoint.host, accept: 'text/event-stream' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    const events = new EventStreamParser();
    let broken: Error | undefined;
    const controller = new AbortController();
    const signal = opts.signal ? AbortSignal.any([opts.signal, controller.signal]) : controller.signal;
    const stop = (err: Error) => {
      broken ??= err;
      controller.abort(err);
    };
    const res = await this.transport(this.endpoint, {
      method: 'GET',
      path: '/api/activity/events',
      headers,
      timeoutMs: opts.silentMs ?? STREAM_SILENT_MS,
      signal,
      onData: (piece) => {
        if (broken) return;
        try {
          for (const e of events.push(piece.toString('utf8'))) {
            if (e.event === 'activity') on.activity(parseEvent(activitySchema, e));
            else if (e.event === 'cluster') on.cluster(parseEvent(activityClusterSchema, e));
          }
        } catch (err) {
          stop(err as Error);
        }
      },
    }).catch((err: unknown) => {
      throw broken ?? err;
    });
    if (broken) throw broken;
    if (res.status < 200 || res.status >= 300)
      throw new DplabError(`The seat's runner refused its activity stream (HTTP ${res.status}).`, { status: 502 });
  }

  async clusters(opts?: SeatCallOptions): Promise<ClusterStatus[]> {
    return (await this.call('GET', '/api/clusters', clusterListSchema, undefined, opts)).clusters;
  }

  cluster(mode: Mode, opts?: SeatCallOptions): Promise<ClusterStatus> {
    return this.call('GET', `/api/clusters/${mode}`, clusterStatusSchema, undefined, opts);
  }

  /** Ask the runner to bring a cluster up (it answers 202 and provisions on its own). */
  async clusterUp(mode: Mode, opts?: SeatCallOptions): Promise<void> {
    await this.call('POST', `/api/clusters/${mode}/up`, clusterStartSchema, {}, opts);
  }

  deleteCluster(mode: Mode, opts?: SeatCallOptions): Promise<ClusterStatus> {
    return this.call('DELETE', `/api/clusters/${mode}`, clusterStatusSchema, undefined, opts);
  }

  /**
   * Delete every cluster of this seat that exists (or is half made), through its runner; throws
   * at the first it could not delete. For a caller that keeps the seat when its clusters stay.
   */
  async deleteClusters(opts: SeatCallOptions = {}): Promise<Mode[]> {
    const deleted: Mode[] = [];
    for (const c of await this.clusters(opts)) {
      if (c.state === 'absent') continue;
      await this.deleteCluster(c.mode, opts);
      deleted.push(c.mode);
    }
    return deleted;
  }

  /**
   * Best effort, for a seat that goes anyway: every mode's cluster asked to go (no list first, so
   * a runner that cannot list still deletes), all within `withinMs` or until `signal` aborts.
   * Returns what could not be done, in words.
   */
  async deleteClustersBestEffort(opts: { signal?: AbortSignal; withinMs?: number } = {}): Promise<string[]> {
    const withinMs = opts.withinMs ?? BEST_EFFORT_DELETE_MS;
    const deadline = AbortSignal.timeout(withinMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
    const problems: string[] = [];
    for (const mode of MODES) {
      try {
        await this.deleteCluster(mode, { signal, timeoutMs: withinMs });
      } catch (err) {
        problems.push(`${mode}: ${(err as Error).message}`);
        if (signal.aborted) break;
      }
    }
    return problems;
  }
}
/** One status read while a cluster warms (it lists kind clusters, which a busy host answers slowly). */
const WARM_STATUS_TIMEOUT_MS = 30_000;

/**
 * Bring each warm mode's cluster up through the seat's runner, one after the other (each kind
 * create is heavy), saying how far it got; both seat backends use it.
 */
export async function warmUp(
  client: SeatClient,
  modes: readonly Mode[],
  timeouts: { startMs: number; warmMs: number; warmPollMs: number },
  say: (message: string) => void,
): Promise<void> {
  await client.waitHealthy(timeouts.startMs);
  for (const mode of modes) {
    say(`Starting the ${mode} cluster…`);
    await client.clusterUp(mode, { timeoutMs: WARM_STATUS_TIMEOUT_MS });
    const deadline = Date.now() + timeouts.warmMs;
    for (;;) {
      let status;
      try {
        status = await client.cluster(mode, { timeoutMs: WARM_STATUS_TIMEOUT_MS });
      } catch (err) {
        // A busy host (a class's clusters starting at once) answers slowly; a runner that died is
        // reported by its exit, one that stays silent by the deadline.
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, timeouts.warmPollMs));
        continue;
      }
      if (status.state === 'ready') break;
      if (status.state === 'broken' || (status.state === 'absent' && status.progress?.endedAt))
        throw new DplabError(`The ${mode} cluster did not come up: ${status.error?.message ?? status.state}.`);
      const running = status.progress?.actions.find((a) => a.state === 'running');
      say(`${mode} cluster: ${running?.title ?? status.state}…`);
      if (Date.now() > deadline) throw new DplabError(`The ${mode} cluster was not ready within ${timeouts.warmMs / 60_000} min.`);
      await new Promise((r) => setTimeout(r, timeouts.warmPollMs));
    }
  }
}
