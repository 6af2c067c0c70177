/**
 * The terminal watch socket (`/api/terminal/watch`): a read-only mirror of the runner's broadcast
 * terminal (terminals/broadcast.ts). Same frames as the terminal socket, plus `mirror` (a new
 * screen starts: reset to this grid, the replay follows) and `resize` (the watched grid changed).
 * Nothing a watcher sends reaches a shell: input, resize and binary frames are answered once
 * with a read-only notice, everything after that is dropped.
 */
import type { WebSocket } from 'ws';
import type { ServerMessage } from '../wire/terminal.ts';
import { READ_ONLY_NOTICE, type TerminalBroadcast } from '../terminals/broadcast.ts';
import { refuseTerminal } from './terminal-socket.ts';

function send(ws: WebSocket, msg: ServerMessage): void {
  if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
}

export function attachWatcher(ws: WebSocket, broadcast: TerminalBroadcast): void {
  const watching = broadcast.watch({
    control: (msg) => send(ws, msg),
    output: (chunk) => {
      if (ws.readyState === ws.OPEN) ws.send(chunk, { binary: true });
    },
    get buffered() {
      return ws.bufferedAmount;
    },
  });
  if (!watching) {
    refuseTerminal(ws, 'This runner already has the most viewers it serves at once; try again later.');
    return;
  }
  let told = false;
  ws.on('message', () => {
    if (told) return;
    told = true;
    send(ws, { type: 'notice', message: READ_ONLY_NOTICE });
  });
  const end = () => watching.close();
  ws.on('close', end);
  ws.on('error', end);
}
