/** Server-Sent Events on an API response: the cluster event stream and a goto run's progress. */
import type { ServerResponse } from 'node:http';

export function startEventStream(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-content-type-options': 'nosniff',
    'x-accel-buffering': 'no',
  });
}

export function sendEvent(res: ServerResponse, event: string, data: unknown): void {
  if (!res.writableEnded) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/**
 * Keep a subscription's event stream open: a heartbeat comment every `heartbeatMs` (proxies and
 * browsers drop idle streams), and `release` (the unsubscribes) once the client leaves or the
 * request is aborted. Resolves then.
 */
export function holdEventStream(res: ServerResponse, signal: AbortSignal, heartbeatMs: number, release: () => void): Promise<void> {
  const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), heartbeatMs);
  heartbeat.unref();
  return new Promise<void>((resolve) => {
    let released = false;
    const done = () => {
      if (released) return;
      released = true;
      release();
      clearInterval(heartbeat);
      resolve();
    };
    if (signal.aborted) done();
    else signal.addEventListener('abort', done, { once: true });
    res.on('close', done);
  });
}
