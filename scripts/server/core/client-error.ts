/**
 * How the runner and the portal answer a connection Node gave up on (`clientError`): bad bytes,
 * headers too large, or a request that took too long.
 *
 * The one case that matters most is the quiet one. A browser opens sockets ahead of the next
 * click and leaves them idle; a learner reads a lesson for longer than `headersMs`, so Node
 * times those sockets out before a byte arrived. Chromium then takes such a never-used socket
 * as still good, sends the next navigation on it, and shows whatever the server wrote there as
 * that page's answer: a `400` made 5 of 6 "Next" clicks after 20 s of reading an error page.
 * A socket that never sent a byte has no request to answer, so it is closed without a word (the
 * browser opens another); a timed-out request gets Node's own 408, which browsers retry.
 */
import type { Duplex } from 'node:stream';

/** The status Node itself would give, or none when the socket never sent anything. */
function clientErrorStatus(err: NodeJS.ErrnoException, bytesRead: number): string | null {
  if (err.code === 'ECONNRESET') return null;
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return bytesRead === 0 ? null : '408 Request Timeout';
  if (err.code === 'HPE_HEADER_OVERFLOW') return '431 Request Header Fields Too Large';
  return '400 Bad Request';
}

/** The `clientError` listener of both servers: answer as above, then let the socket go. */
export function answerClientError(err: Error, socket: Duplex): void {
  const bytesRead = (socket as Duplex & { bytesRead?: number }).bytesRead ?? 0;
  const status = clientErrorStatus(err as NodeJS.ErrnoException, bytesRead);
  if (status && socket.writable) socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`);
  else socket.destroy();
}
