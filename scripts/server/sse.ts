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
