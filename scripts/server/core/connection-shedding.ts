/**
 * The connection cap, enforced so that a flood cannot lock the learner out (issue 25).
 *
 * Node's `server.maxConnections` refuses the newest socket, so 256 silent or trickling
 * connections keep every new one out until the header timeout cuts them. Here the cap is
 * kept by making room instead: when a new socket would go over it, the socket that has sent
 * the fewest bytes among those doing nothing we owe an answer to (still sending headers, or
 * idle between requests) is destroyed, the oldest of equals first. A WebSocket (or any
 * upgrade) and a request whose headers are complete are never shed; when nothing else is
 * open, the newcomer is the one refused, as before. The timeouts still cut what is left.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

interface Tracked {
  /** Requests whose headers are complete and whose response has not closed (keep-alive pipelines count each). */
  inFlight: number;
  /** Handed to an upgrade handler: a terminal, a watcher, a forwarded socket. */
  upgraded: boolean;
}

export interface ConnectionCap {
  /** Sockets open now. */
  readonly open: number;
  /** Quiet sockets destroyed to make room. */
  readonly shed: number;
  /** Newcomers destroyed because every open socket was busy. */
  readonly refused: number;
}

/** Caps `server` at `max` sockets at once, shedding the quietest one to make room. */
export function capConnections(server: Server, max: number): ConnectionCap {
  // Insertion order is age: the first quietest found is the oldest of equals.
  const sockets = new Map<Socket, Tracked>();
  let shed = 0;
  let refused = 0;

  server.on('connection', (socket: Socket) => {
    sockets.set(socket, { inFlight: 0, upgraded: false });
    socket.once('close', () => sockets.delete(socket));
    if (sockets.size <= max) return;
    const victim = quietest(sockets, socket) ?? socket;
    if (victim === socket) refused++;
    else shed++;
    // Forgotten now, not at its 'close', so the next newcomer of the same burst counts right.
    sockets.delete(victim);
    victim.destroy();
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = sockets.get(req.socket);
    if (!state) return;
    state.inFlight++;
    res.once('close', () => state.inFlight--);
  });
  server.on('upgrade', (req: IncomingMessage) => {
    const state = sockets.get(req.socket);
    if (state) state.upgraded = true;
  });

  return {
    get open() {
      return sockets.size;
    },
    get shed() {
      return shed;
    },
    get refused() {
      return refused;
    },
  };
}

/** The sheddable socket that has sent the fewest bytes (the oldest of equals), other than `newcomer`. */
function quietest(sockets: ReadonlyMap<Socket, Tracked>, newcomer: Socket): Socket | undefined {
  let best: Socket | undefined;
  let bestBytes = Infinity;
  for (const [socket, state] of sockets) {
    if (socket === newcomer || state.upgraded || state.inFlight > 0) continue;
    const bytes = socket.bytesRead;
    if (bytes < bestBytes) {
      best = socket;
      bestBytes = bytes;
    }
  }
  return best;
}
