// An event stream's reader that does not read is closed once its backlog passes the bound, so a
// stream nobody reads cannot grow the server (issue 36); one that reads gets every event.
import { createServer, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sendEvent, SSE_MAX_BACKLOG_BYTES, startEventStream } from './core/sse.ts';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function streamServer(onStream: (res: ServerResponse) => void): Promise<number> {
  const server = createServer((_req, res) => {
    startEventStream(res);
    onStream(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  close = async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return (server.address() as { port: number }).port;
}

describe('event streams to slow readers', () => {
  it('close a reader that reads nothing once its backlog passes the bound, never holding more', async () => {
    let stream: ServerResponse | undefined;
    let most = 0;
    const port = await streamServer((res) => {
      stream = res;
      const payload = 'x'.repeat(64 * 1024);
      // 32 MiB of events at once, to a reader that never reads.
      for (let i = 0; i < 512; i++) {
        sendEvent(res, 'state', payload);
        most = Math.max(most, res.writableLength);
      }
    });
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.pause();
    socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    const deadline = Date.now() + 10_000;
    while (!stream?.destroyed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(stream?.destroyed).toBe(true);
    expect(most).toBeLessThan(SSE_MAX_BACKLOG_BYTES + 128 * 1024);
    socket.destroy();
  });
});
