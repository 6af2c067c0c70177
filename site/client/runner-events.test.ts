// The page's event stream over a day of real use: a connection a sleeping laptop left looking
// open, a runner that stops and comes back, a token the runner no longer knows.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GIVEN_UP_RETRY_MS, openRunnerEvents } from './runner-events.ts';
import { SSE_STALL_MS } from '../../scripts/wire/events.ts';

type Answer = () => Promise<Response>;
let answers: Answer[];
let fetches: number;
let page: EventTarget & { visibilityState: string };
let win: EventTarget;

/** A stream that sends `text` and then stays open, silent, until the fetch is aborted. */
function openStream(text: string, signal: AbortSignal): Response {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      if (text) c.enqueue(new TextEncoder().encode(text));
      signal.addEventListener('abort', () => c.error(new DOMException('aborted', 'AbortError')));
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

beforeEach(() => {
  vi.useFakeTimers();
  answers = [];
  fetches = 0;
  page = Object.assign(new EventTarget(), { visibilityState: 'visible' });
  win = new EventTarget();
  vi.stubGlobal('document', page);
  vi.stubGlobal('window', win);
  vi.stubGlobal('location', new URL('http://127.0.0.1:4321/labs/first-service/'));
  const store = new Map([['dplab.token', 'a'.repeat(32)]]);
  vi.stubGlobal('localStorage', { getItem: (k: string) => store.get(k) ?? null, setItem: () => undefined, removeItem: () => undefined });
  vi.stubGlobal('fetch', (_url: string, init: RequestInit) => {
    fetches++;
    const next = answers.shift();
    if (!next) return Promise.reject(new TypeError('Failed to fetch'));
    return next().then((r) => r ?? openStream('', init.signal!));
  });
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

function listen() {
  const events: string[] = [];
  const gaveUp: string[] = [];
  const stream = openRunnerEvents('/api/clusters/events', {
    onEvent: (type, data) => events.push(`${type} ${data}`),
    onGiveUp: (reason) => gaveUp.push(reason),
  });
  return { events, gaveUp, stream };
}

describe('the runner event stream', () => {
  it('takes a stream that hears nothing, not even a heartbeat, for three heartbeats as dead and opens a new one', async () => {
    let signal: AbortSignal | undefined;
    vi.stubGlobal('fetch', (_url: string, init: RequestInit) => {
      fetches++;
      signal = init.signal!;
      return Promise.resolve(openStream(fetches === 1 ? 'event: status\ndata: 1\n\n' : 'event: status\ndata: 2\n\n', signal));
    });
    const { events, stream } = listen();
    await vi.advanceTimersByTimeAsync(SSE_STALL_MS - 1_000);
    expect(fetches).toBe(1);
    expect(events).toEqual(['status 1']);
    // Past the stall bound (and the one-second pause before a retry): a second connection.
    await vi.advanceTimersByTimeAsync(2_500);
    expect(fetches).toBe(2);
    expect(events).toEqual(['status 1', 'status 2']);
    stream.close();
  });

  it('says the runner is gone once, then goes on looking, and picks up again when it answers', async () => {
    const { events, gaveUp, stream } = listen();
    // 1 + 2 + 4 + 8 + 16 s of back-off: six failed attempts, then it says so.
    await vi.advanceTimersByTimeAsync(31_500);
    expect(gaveUp).toEqual(['offline']);
    const afterGivingUp = fetches;
    await vi.advanceTimersByTimeAsync(GIVEN_UP_RETRY_MS + 500);
    expect(fetches).toBe(afterGivingUp + 1);
    // The runner is started again: the next look finds it, and the page hears its events.
    answers.push(async () => openStream('event: snapshot\ndata: {}\n\n', new AbortController().signal));
    await vi.advanceTimersByTimeAsync(GIVEN_UP_RETRY_MS + 500);
    expect(events).toEqual(['snapshot {}']);
    expect(gaveUp).toEqual(['offline']);
    stream.close();
  });

  it('looks again at once when the network comes back or the tab is shown, not 30 s later', async () => {
    const { gaveUp, stream } = listen();
    await vi.advanceTimersByTimeAsync(31_500);
    expect(gaveUp).toEqual(['offline']);
    const before = fetches;
    win.dispatchEvent(new Event('online'));
    await vi.advanceTimersByTimeAsync(10);
    expect(fetches).toBe(before + 1);
    page.dispatchEvent(new Event('visibilitychange'));
    await vi.advanceTimersByTimeAsync(10);
    expect(fetches).toBe(before + 2);
    stream.close();
  });

  it('stops for good on a token the runner refuses (only a new link helps), and after close', async () => {
    answers.push(async () => new Response('', { status: 401 }));
    const { gaveUp } = listen();
    await vi.advanceTimersByTimeAsync(GIVEN_UP_RETRY_MS * 3);
    expect(gaveUp).toEqual(['unauthorised']);
    expect(fetches).toBe(1);

    const second = listen();
    second.stream.close();
    const closedAt = fetches;
    await vi.advanceTimersByTimeAsync(GIVEN_UP_RETRY_MS * 3);
    expect(fetches).toBe(closedAt);
  });
});
