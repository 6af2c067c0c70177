/**
 * The portal's own calls to a seat's runner (warm its clusters, read its activity, delete its
 * clusters), with the seat's runner token and the Host and Origin the runner demands. Both
 * seat backends and the dashboard's watcher use it; learners' requests go through forward.ts.
 */
import { request } from 'node:http';
import { z } from 'zod';
import { DplabError } from '../errors.ts';
import { activitySchema, type Activity } from '../wire/activity.ts';
import { clusterListSchema, clusterStartSchema, clusterStatusSchema, type ClusterStatus } from '../wire/clusters.ts';
import type { Mode } from '../wire/modes.ts';
import type { SeatEndpoint } from './seat-backend.ts';

const DEFAULT_TIMEOUT_MS = 10_000;
/** Answers larger than this are not a runner's. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface SeatCallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export class SeatClient {
  constructor(
    readonly endpoint: SeatEndpoint,
    private readonly token: string,
  ) {}

  /** One JSON call; a non-2xx answer throws with the runner's own message. */
  call<S extends z.ZodType>(method: string, path: string, schema: S, body?: unknown, opts: SeatCallOptions = {}): Promise<z.output<S>> {
    const url = new URL(path, this.endpoint.url);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        {
          method,
          headers: {
            host: this.endpoint.host,
            authorization: `Bearer ${this.token}`,
            // The runner wants its own origin on every non-GET request.
            ...(method === 'GET' ? {} : { origin: `http://${this.endpoint.host}` }),
            ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
          },
          timeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
          signal: opts.signal,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_BODY_BYTES) req.destroy(new Error('answer too large'));
            else chunks.push(c);
          });
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              return reject(
                new DplabError(`The seat's runner answered ${method} ${path} with something other than JSON (HTTP ${res.statusCode}).`),
              );
            }
            if ((res.statusCode ?? 500) >= 300) {
              const message = (json as { error?: { message?: string } })?.error?.message ?? `HTTP ${res.statusCode}`;
              return reject(new DplabError(`The seat's runner refused ${method} ${path}: ${message}`, { status: 502 }));
            }
            const parsed = schema.safeParse(json);
            if (!parsed.success)
              return reject(new DplabError(`The seat's runner answered ${method} ${path} in an unexpected shape.`, { status: 502 }));
            resolve(parsed.data);
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new DplabError(`The seat's runner did not answer ${method} ${path} in time.`, { status: 504 })));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Wait until the runner answers its open health route. */
  async waitHealthy(withinMs: number): Promise<void> {
    const deadline = Date.now() + withinMs;
    for (;;) {
      try {
        await this.call('GET', '/api/health', z.object({ ok: z.literal(true) }), undefined, { timeoutMs: 2_000 });
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

  async clusters(opts?: SeatCallOptions): Promise<ClusterStatus[]> {
    return (await this.call('GET', '/api/clusters', clusterListSchema, undefined, opts)).clusters;
  }

  cluster(mode: Mode, opts?: SeatCallOptions): Promise<ClusterStatus> {
    return this.call('GET', `/api/clusters/${mode}`, clusterStatusSchema, undefined, opts);
  }

  async clusterUp(mode: Mode, opts?: SeatCallOptions): Promise<void> {
    await this.call('POST', `/api/clusters/${mode}/up`, clusterStartSchema, {}, opts);
  }

  /** Delete every cluster of this seat that exists (or is half made), through its runner. */
  async deleteClusters(opts: SeatCallOptions = {}): Promise<Mode[]> {
    const deleted: Mode[] = [];
    for (const c of await this.clusters(opts)) {
      if (c.state === 'absent') continue;
      await this.call('DELETE', `/api/clusters/${c.mode}`, clusterStatusSchema, undefined, opts);
      deleted.push(c.mode);
    }
    return deleted;
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
