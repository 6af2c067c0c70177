/**
 * A TCP port free on 127.0.0.1 right now: the kernel picks it for a listener that closes at
 * once. Another process may take it before the caller binds it; callers that can pass port 0
 * to their own server should do that instead.
 */
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}
