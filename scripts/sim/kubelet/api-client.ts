/**
 * A small Kubernetes API client over Node's https: JSON requests and watch streams. The stand-in
 * needs a dozen calls (nodes, leases, pods, events), so this beats a client library: no new
 * dependency, and @kubernetes/client-node's current lines want newer Node and bring a large tree.
 */
import https from 'node:https';
import http from 'node:http';
import { DplabError } from '../../base/errors.ts';
import type { ApiCredentials } from './kubeconfig.ts';

/** A request the API server answered with an error status; `status` is the HTTP code. */
export class ApiError extends DplabError {
  readonly code: number;
  readonly reason: string;
  constructor(method: string, path: string, code: number, body: string) {
    let reason = '';
    let message = body.slice(0, 500);
    try {
      const s = JSON.parse(body) as { reason?: string; message?: string };
      reason = s.reason ?? '';
      message = s.message ?? message;
    } catch {
      // not a Status object
    }
    super(`${method} ${path}: ${code} ${reason} ${message}`.replace(/\s+/g, ' ').trim());
    this.name = 'ApiError';
    this.code = code;
    this.reason = reason;
  }
}

/** How long one ordinary request may take. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export class ApiClient {
  private readonly agent: https.Agent | http.Agent;
  private readonly url: URL;
  private readonly headers: Record<string, string>;

  constructor(creds: ApiCredentials) {
    this.url = new URL(creds.server);
    this.headers = { Accept: 'application/json', 'User-Agent': 'dplab-sim-kubelet/v1.35.0' };
    if (creds.token) this.headers.Authorization = `Bearer ${creds.token}`;
    this.agent =
      this.url.protocol === 'https:'
        ? new https.Agent({ keepAlive: true, ca: creds.ca, cert: creds.cert, key: creds.key, rejectUnauthorized: !creds.insecure })
        : new http.Agent({ keepAlive: true });
  }

  private open(
    method: string,
    path: string,
    headers: Record<string, string>,
    timeoutMs: number | null,
    signal?: AbortSignal,
  ): http.ClientRequest {
    const mod = this.url.protocol === 'https:' ? https : http;
    const req = mod.request({
      protocol: this.url.protocol,
      hostname: this.url.hostname,
      port: this.url.port,
      path,
      method,
      agent: this.agent,
      headers: { ...this.headers, ...headers },
      signal,
    });
    if (timeoutMs !== null) req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path}: no answer in ${timeoutMs} ms`)));
    return req;
  }

  /** One JSON request; resolves with the parsed body, rejects with ApiError on 4xx/5xx. */
  request<T = unknown>(method: string, path: string, body?: unknown, contentType = 'application/json', signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = this.open(
        method,
        path,
        payload === undefined ? {} : { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(payload)) },
        REQUEST_TIMEOUT_MS,
        signal,
      );
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 500) >= 400) return reject(new ApiError(method, path, res.statusCode ?? 500, text));
          try {
            resolve((text ? JSON.parse(text) : {}) as T);
          } catch (err) {
            reject(new DplabError(`${method} ${path}: answer is not JSON: ${(err as Error).message}`));
          }
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  get<T = unknown>(path: string, signal?: AbortSignal): Promise<T> {
    return this.request<T>('GET', path, undefined, undefined, signal);
  }

  /** JSON merge patch (RFC 7386): arrays are replaced whole, which is what status updates want. */
  mergePatch<T = unknown>(path: string, patch: unknown): Promise<T> {
    return this.request<T>('PATCH', path, patch, 'application/merge-patch+json');
  }

  /**
   * A watch stream (`?watch=1`): calls onEvent per line until the server ends the stream (its
   * timeoutSeconds), the signal aborts, or an error. Resolves when the stream ends.
   */
  watch<T>(path: string, onEvent: (e: WatchEvent<T>) => void, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const req = this.open('GET', path, {}, null, signal);
      req.on('response', (res) => {
        if ((res.statusCode ?? 500) >= 400) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => reject(new ApiError('GET', path, res.statusCode ?? 500, Buffer.concat(chunks).toString('utf8'))));
          return;
        }
        let buffered = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffered += chunk;
          let nl: number;
          while ((nl = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, nl).trim();
            buffered = buffered.slice(nl + 1);
            if (!line) continue;
            try {
              onEvent(JSON.parse(line) as WatchEvent<T>);
            } catch (err) {
              req.destroy(err as Error);
              return;
            }
          }
        });
        res.on('end', () => resolve());
        res.on('error', (err) => (signal.aborted ? resolve() : reject(err)));
      });
      req.on('error', (err) => (signal.aborted ? resolve() : reject(err)));
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
