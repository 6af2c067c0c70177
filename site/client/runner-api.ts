/**
 * Small helpers every browser component uses to talk to the runner on the same origin.
 * The token travels only through runner-auth.ts (bearer header, socket subprotocol).
 */
import type { z } from '../../scripts/wire/zod.ts';
import { errorBodySchema, type ErrorJson } from '../../scripts/wire/errors.ts';
import { SEAT_UNREACHABLE_HEADER } from '../../scripts/wire/portal.ts';
import { sessionSchema } from '../../scripts/wire/session.ts';
import { describeIssues } from '../../scripts/wire/validate.ts';
import { runnerFetch } from './runner-auth.ts';

type ApiError = ErrorJson;

/**
 * Set on pages the workshop portal serves (its learner script sets it): their runner is a seat's,
 * which the instructor runs, so the learner has no `npm start` or printed link to turn to.
 */
export const SEAT_PAGE_ATTRIBUTE = 'data-dplab-seat';

const onSeatPage = () => globalThis.document?.documentElement.hasAttribute(SEAT_PAGE_ATTRIBUTE) ?? false;

export class RunnerUnavailable extends Error {
  constructor(readonly reason: 'offline' | 'unauthorised') {
    super(
      onSeatPage()
        ? reason === 'offline'
          ? 'Your workshop seat is not answering. Tell your instructor, then reload this page.'
          : 'This page is not signed in to a workshop seat. Join again on the workshop’s join page (/portal/join).'
        : reason === 'offline'
          ? 'The local runner is not reachable. Start it with `npm start` in the project folder and open the link it prints.'
          : 'This page has no valid runner token. Open the link the runner printed (http://127.0.0.1:…/#token=…).',
    );
  }
}

/** The runner answered, but not in the shape this page was built for (an older or newer runner). */
export class UnexpectedAnswer extends Error {
  constructor(what: string, error: z.core.$ZodError) {
    super(
      `The runner's answer to ${what} has an unexpected shape (${describeIssues(error)}). Reload the page; if it persists, restart the runner.`,
    );
  }
}

/** Call the runner and validate its answer against the wire schema; nothing unchecked reaches the page. */
export async function api<S extends z.ZodMiniType>(
  path: string,
  schema: S,
  init: { method?: string; body?: unknown; signal?: AbortSignal } = {},
): Promise<z.output<S>> {
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
  // The workshop portal's own answer: the seat behind it is down, which is the runner being offline.
  if (res.headers.has(SEAT_UNREACHABLE_HEADER)) throw new RunnerUnavailable('offline');
  const text = await res.text();
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    // A static host (no runner) answers API paths with HTML.
    throw new RunnerUnavailable('offline');
  }
  if (!res.ok) {
    const body = errorBodySchema.safeParse(data);
    const e: ApiError = body.success ? body.data.error : { message: `HTTP ${res.status}` };
    throw Object.assign(new Error(e.message), { fix: e.fix, details: e.details, status: res.status });
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new UnexpectedAnswer(`${init.method ?? 'GET'} ${path}`, parsed.error);
  return parsed.data;
}

/** Ask whether the runner is there and this page is signed in, without throwing. */
export async function runnerState(): Promise<'ok' | 'offline' | 'unauthorised'> {
  try {
    await api('/api/session', sessionSchema);
    return 'ok';
  } catch (err) {
    return err instanceof RunnerUnavailable ? err.reason : 'offline';
  }
}
