/**
 * Server-Sent Events from the runner over fetch, because EventSource cannot send the token
 * header (and a token in the query string would sit in history and logs). Parses the
 * text/event-stream format, reconnects with back-off like EventSource does, and gives up
 * after a few failed attempts in a row so the page can say the runner is gone.
 */
import { runnerFetch } from './runner-auth.ts';

export interface RunnerEventsHandlers {
  /** One event: its `event:` name (default "message") and its data lines joined. */
  onEvent(type: string, data: string): void;
  /** The stream could not be (re)opened RETRIES times in a row, or the runner refused it. */
  onGiveUp(reason: 'offline' | 'unauthorised'): void;
}

const RETRIES = 5;
const FIRST_RETRY_MS = 1_000;

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

  async function run(): Promise<void> {
    while (!controller.signal.aborted) {
      try {
        const res = await runnerFetch(path, { headers: { accept: 'text/event-stream' }, signal: controller.signal, cache: 'no-store' });
        if (res.status === 401) return handlers.onGiveUp('unauthorised');
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        failures = 0;
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
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
      }
      if (++failures > RETRIES) return handlers.onGiveUp('offline');
      await new Promise((r) => setTimeout(r, FIRST_RETRY_MS * 2 ** (failures - 1)));
    }
  }

  void run();
  return { close: () => controller.abort() };
}
