/**
 * Server-Sent Events on an API response, runner and portal alike (the server core): the cluster
 * and activity streams, a goto run's progress, the portal dashboard's state.
 */
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

/**
 * What may wait unread for one event stream's reader. A reader that lets more pile up (a tab in
 * the background of a stalled machine, a client that never reads) is closed: its EventSource
 * connects again and starts from the current state, and the server's memory stays bounded
 * (issue 36: an unread instructor stream grew the portal by ~7 MiB).
 */
export const SSE_MAX_BACKLOG_BYTES = 1024 * 1024;

function write(res: ServerResponse, text: string): void {
  if (res.writableEnded || res.destroyed) return;
  if (res.writableLength > SSE_MAX_BACKLOG_BYTES) {
    res.destroy();
    return;
  }
  res.write(text);
}

export function sendEvent(res: ServerResponse, event: string, data: unknown): void {
  write(res, `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** A comment line (a heartbeat): keeps proxies from closing an idle stream. */
function sendComment(res: ServerResponse, text: string): void {
  write(res, `: ${text}\n\n`);
}

/**
 * Keep a subscription's event stream open: a heartbeat comment every `heartbeatMs` (proxies and
 * browsers drop idle streams), and `release` (the unsubscribes) once the client leaves or the
 * request is aborted. Resolves then.
 */
export function holdEventStream(res: ServerResponse, signal: AbortSignal, heartbeatMs: number, release: () => void): Promise<void> {
  const heartbeat = setInterval(() => sendComment(res, 'heartbeat'), heartbeatMs);
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
