/**
 * Server-Sent Events from the runner over fetch, because EventSource cannot send the token
 * header (and a token in the query string would sit in history and logs). Parses the
 * text/event-stream format and reconnects with back-off like EventSource does. After a few
 * failed attempts in a row it tells the page the runner is gone, and goes on looking, slowly,
 * and at once when the tab is shown again or the network comes back: a learner who leaves a tab
 * open overnight, wakes a laptop or starts the runner again gets a live page without reloading.
 * A stream that hears nothing, not even the runner's heartbeat, for SSE_STALL_MS is taken for
 * dead (a sleeping laptop's connection can look open for hours) and opened anew.
 */
import { runnerFetch } from './runner-auth.ts';
import { SSE_STALL_MS } from '../../scripts/wire/events.ts';

export interface RunnerEventsHandlers {
  /** One event: its `event:` name (default "message") and its data lines joined. */
  onEvent(type: string, data: string): void;
  /**
   * The stream could not be (re)opened RETRIES times in a row (it keeps trying: the next event
   * means it is back), or the runner refused the token (it stops: only a new link helps).
   */
  onGiveUp(reason: 'offline' | 'unauthorised'): void;
}

const RETRIES = 5;
const FIRST_RETRY_MS = 1_000;
/** How often a stream that gave up looks again, besides when the tab is shown or the network returns. */
export const GIVEN_UP_RETRY_MS = 30_000;

export function openRunnerEvents(path: string, handlers: RunnerEventsHandlers): { close(): void } {
  const controller = new AbortController();
  let failures = 0;

  function dispatch(block: string): void {
    let type = 'message';
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') type = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length) handlers.onEvent(type, data.join('\n'));
  }

  /** Resolves after `ms`, or sooner when the tab is shown again or the network comes back. */
  function pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        document.removeEventListener('visibilitychange', onShown);
        window.removeEventListener('online', done);
        controller.signal.removeEventListener('abort', done);
        resolve();
      };
      const onShown = () => document.visibilityState === 'visible' && done();
      const timer = setTimeout(done, ms);
      document.addEventListener('visibilitychange', onShown);
      window.addEventListener('online', done);
      controller.signal.addEventListener('abort', done);
    });
  }

  async function run(): Promise<void> {
    while (!controller.signal.aborted) {
      // One attempt's own abort: the page leaving, or the stream falling silent.
      const attempt = new AbortController();
      const leave = () => attempt.abort();
      controller.signal.addEventListener('abort', leave);
      let stall: ReturnType<typeof setTimeout> | undefined;
      const listen = () => {
        clearTimeout(stall);
        stall = setTimeout(() => attempt.abort(), SSE_STALL_MS);
      };
      try {
        listen();
        const res = await runnerFetch(path, { headers: { accept: 'text/event-stream' }, signal: attempt.signal, cache: 'no-store' });
        if (res.status === 401) return handlers.onGiveUp('unauthorised');
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        failures = 0;
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          listen();
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let sep: RegExpExecArray | null;
          while ((sep = /\r?\n\r?\n/.exec(buffer))) {
            dispatch(buffer.slice(0, sep.index));
            buffer = buffer.slice(sep.index + sep[0].length);
          }
        }
      } catch {
        if (controller.signal.aborted) return;
      } finally {
        clearTimeout(stall);
        controller.signal.removeEventListener('abort', leave);
      }
      failures++;
      if (failures === RETRIES + 1) handlers.onGiveUp('offline');
      await pause(failures > RETRIES ? GIVEN_UP_RETRY_MS : FIRST_RETRY_MS * 2 ** (failures - 1));
    }
  }

  void run();
  return { close: () => controller.abort() };
}
