/**
 * Small helpers every browser component uses to talk to the runner on the same origin.
 * The token travels only through runner-auth.ts (bearer header, socket subprotocol).
 */
import { runnerFetch } from './runner-auth.ts';

export interface ApiError {
  message: string;
  fix?: string;
  details?: string;
}

export class RunnerUnavailable extends Error {
  constructor(readonly reason: 'offline' | 'unauthorised') {
    super(
      reason === 'offline'
        ? 'The local runner is not reachable. Start it with `npm start` in the project folder and open the link it prints.'
        : 'This page has no valid runner token. Open the link the runner printed (http://127.0.0.1:…/#token=…).',
    );
  }
}

export async function api<T>(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  let res: Response;
  try {
    res = await runnerFetch(path, {
      method: init.method ?? 'GET',
      headers: init.body === undefined ? {} : { 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: init.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new RunnerUnavailable('offline');
  }
  if (res.status === 401) throw new RunnerUnavailable('unauthorised');
  const text = await res.text();
  let data: unknown = undefined;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    // A static host (no runner) answers API paths with HTML.
    throw new RunnerUnavailable('offline');
  }
  if (!res.ok) {
    const e = (data as { error?: ApiError })?.error ?? { message: `HTTP ${res.status}` };
    throw Object.assign(new Error(e.message), { fix: e.fix, details: e.details, status: res.status });
  }
  return data as T;
}

/** Ask whether the runner is there and this page is signed in, without throwing. */
export async function runnerState(): Promise<'ok' | 'offline' | 'unauthorised'> {
  try {
    await api('/api/session');
    return 'ok';
  } catch (err) {
    return err instanceof RunnerUnavailable ? err.reason : 'offline';
  }
}
