/**
 * The portal's own API under `/portal/api/`: joining with the workshop's code, a learner's view
 * of their seat, and the instructor's routes (the state, its event stream, the broadcast line,
 * removing a seat, ending the workshop), matched by the server core's router.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GuessLimiters } from '../server/guess-limit.ts';
import { matchRoute, readJsonBody, requestSignal, sendError, sendJson, sendRefusal, type Method } from '../server/core/router.ts';
import { holdEventStream, sendEvent, startEventStream } from '../server/core/sse.ts';
import { SSE_HEARTBEAT_MS } from '../wire/events.ts';
import { broadcastRequestSchema, joinRequestSchema } from '../wire/portal.ts';
import { isSeatId } from '../wire/seat.ts';
import { clientSource, isOperator } from './client-source.ts';
import { checkAddress } from './gate.ts';
import type { PortalDoor } from './portal-door.ts';

/** Joins per client: a class arriving at once through one address is fine, a script making seats is not. */
const JOIN_LIMIT = { burst: 60, leakMs: 1_000 } as const;

interface InstructorRoute {
  method: Method;
  path: string;
  handler(door: PortalDoor, req: IncomingMessage, res: ServerResponse, params: Record<string, string>): Promise<void> | void;
}

/** The dashboard's state as Server-Sent Events: now, then at each change; `streams` holds it until it closes. */
function streamState(door: PortalDoor, res: ServerResponse, streams: Set<ServerResponse>): void {
  startEventStream(res);
  const send = () => sendEvent(res, 'state', door.workshop().state());
  const off = door.workshop().changes.on(send);
  streams.add(res);
  void holdEventStream(res, requestSignal(res), SSE_HEARTBEAT_MS, () => {
    off();
    streams.delete(res);
  });
  send();
}

function instructorRoutes(streams: Set<ServerResponse>): InstructorRoute[] {
  return [
    { method: 'GET', path: '/portal/api/state', handler: (door, _req, res) => sendJson(res, 200, door.workshop().state()) },
    { method: 'GET', path: '/portal/api/events', handler: (door, _req, res) => streamState(door, res, streams) },
    {
      method: 'POST',
      path: '/portal/api/broadcast',
      async handler(door, req, res) {
        const parsed = broadcastRequestSchema.safeParse(await readJsonBody(req));
        if (!parsed.success) return sendJson(res, 400, { error: { message: 'A message of at most 500 characters.' } });
        door.workshop().setBroadcast(parsed.data.message);
        return sendJson(res, 200, { ok: true });
      },
    },
    {
      method: 'DELETE',
      path: '/portal/api/seats/:seat',
      async handler(door, _req, res, { seat }) {
        if (!isSeatId(seat) || !door.workshop().has(seat)) return sendJson(res, 404, { error: { message: 'No such seat.' } });
        await door.workshop().removeSeat(seat);
        return sendJson(res, 200, { ok: true });
      },
    },
    {
      method: 'POST',
      path: '/portal/api/end',
      async handler(door, _req, res) {
        const result = await door.workshop().end();
        return sendJson(res, result.failed.length ? 500 : 200, result);
      },
    },
  ];
}

interface PortalApiOptions {
  /** Seats one client may hold; the operator's own user on this host is not counted. */
  seatsPerClient: number;
  /** The dashboard's open event streams (the portal ends them on close). */
  streams: Set<ServerResponse>;
}

/** The `/portal/api/*` handler of one portal. */
export function portalApi(door: PortalDoor, opts: PortalApiOptions) {
  const joins = new GuessLimiters(JOIN_LIMIT.burst, JOIN_LIMIT.leakMs);
  const wrongCodes = new GuessLimiters();
  const routes = instructorRoutes(opts.streams);

  async function join(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    if (method !== 'POST') return sendJson(res, 405, { error: { message: 'Use POST.' } });
    const where = checkAddress({ method, host: req.headers.host, origin: req.headers.origin, isUpgrade: false }, door.address());
    if (!where.ok) return sendRefusal(res, where);
    // Per client (client-source.ts): the right code always gets through; wrong ones and a
    // stream of joins are held for the client that sends them, and nobody else.
    const source = clientSource(req, door.behindTls);
    const parsed = joinRequestSchema.safeParse(await readJsonBody(req));
    if (!parsed.success)
      return sendJson(res, 400, { error: { message: parsed.error.issues[0]?.message ?? 'Enter the code and your name.' } });
    const right = door.workshop().codeMatches(parsed.data.code);
    const wait = right ? joins.blockedFor(source.key) : wrongCodes.blockedFor(source.key);
    if (wait > 0)
      return sendRefusal(res, {
        status: 429,
        message: `Too many attempts to join; try again in ${wait} s.`,
        retryAfterSeconds: wait,
      });
    if (!right) wrongCodes.wrongGuess(source.key);
    else joins.wrongGuess(source.key);
    // The operator's own user on this host (their browser, a script of theirs) is not counted; a
    // loopback client whose owner the kernel did not say is (before, it was not: a seat's shell
    // whose line was missed in /proc/net/tcp under load took a third seat).
    const counted = !isOperator(source);
    try {
      const share = counted ? { client: source.key, share: opts.seatsPerClient } : undefined;
      return sendJson(res, 200, await door.workshop().join(parsed.data.code, parsed.data.name, share));
    } catch (err) {
      return sendError(res, err);
    }
  }

  function me(req: IncomingMessage, res: ServerResponse): void {
    const who = door.identify(req, false);
    if (!who.ok) return sendRefusal(res, who);
    if (who.who.kind !== 'learner') return sendJson(res, 404, { error: { message: 'The instructor has no seat.' } });
    const view = door.workshop().learnerView(who.who.seat);
    if (!view) return sendJson(res, 401, { error: { message: 'This seat is gone.' } });
    return sendJson(res, 200, view);
  }

  return async function answer(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname;
    if (path === '/portal/api/join') return join(req, res);
    if (path === '/portal/api/me') return me(req, res);
    const who = door.identify(req, false);
    if (!who.ok) return sendRefusal(res, who);
    if (who.who.kind !== 'instructor') return sendRefusal(res, { status: 403, message: 'Only the instructor may do this.' });
    const method = req.method ?? 'GET';
    // The method exactly: a HEAD is no GET here.
    const found = matchRoute(routes, method, path);
    if (found && 'route' in found && found.route.method === method) return found.route.handler(door, req, res, found.params);
    return sendJson(res, 404, { error: { message: `No portal route ${method} ${path}.` } });
  };
}
