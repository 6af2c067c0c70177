/**
 * A learner's runner calls and terminal socket, to their own seat and nowhere else (the seat is
 * the one their token names), and the instructor's watch of a seat's terminal. Which runner
 * paths these are comes from the runner's own list (scripts/wire/runner-paths.ts), matched by
 * the server core's router: the portal loads no part of the runner to know them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { refuseUpgrade } from '../server/core/refuse-upgrade.ts';
import { matchPath, requestUrl, sendJson, sendRefusal } from '../server/core/router.ts';
import { PROGRESS_PATHS, RUNNER_PATHS } from '../wire/runner-paths.ts';
import { isSeatId } from '../wire/seat.ts';
import { forwardHttp, forwardUpgrade } from './forward.ts';
import type { PortalDoor } from './portal-door.ts';

/** The instructor's read-only view of a seat's terminal, forwarded to that seat's watch socket. */
const SEAT_WATCH_PATH = '/portal/api/seats/:seat/watch';

/** After this call the dashboard reads the seat again: its progress, and with `clusters` its clusters too. */
export function changesSeat(method: string, pathname: string): { progress: boolean; clusters: boolean } {
  const progress = method !== 'GET' && PROGRESS_PATHS.some((p) => matchPath(p, pathname) !== null);
  const clusters = method !== 'GET' && pathname.startsWith(`${RUNNER_PATHS.clusters}/`);
  return { progress, clusters };
}

/** A learner's runner call (`/api/*`), to their seat. */
export function forwardLearnerCall(door: PortalDoor, req: IncomingMessage, res: ServerResponse, url: URL): void {
  const who = door.identify(req, false);
  if (!who.ok) return sendRefusal(res, who);
  if (who.who.kind !== 'learner')
    return sendRefusal(res, { status: 403, message: 'The instructor has no seat of their own; use the dashboard.' });
  const seat = who.who.seat;
  const target = door.workshop().target(seat);
  if ('waiting' in target) {
    res.setHeader('retry-after', '2');
    return sendJson(res, 503, { error: { message: target.waiting } });
  }
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') door.workshop().touch(seat);
  const changed = changesSeat(method, url.pathname);
  forwardHttp(req, res, { ...target, path: `${url.pathname}${url.search}` }, () => {
    if (changed.progress || changed.clusters) door.workshop().refresh(seat, { clusters: changed.clusters });
  });
}

/** Every upgrade the portal gets: a learner's terminal to their seat, the instructor's watch of one; nothing else. */
export function forwardSocket(door: PortalDoor, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const url = requestUrl(req);
  if (!url) return refuseUpgrade(socket, 400, 'Malformed request URL.');
  const who = door.identify(req, true);
  if (!who.ok) return refuseUpgrade(socket, who.status, who.message);
  const watch = matchPath(SEAT_WATCH_PATH, url.pathname);
  if (watch) {
    if (who.who.kind !== 'instructor') return refuseUpgrade(socket, 403, 'Only the instructor may watch a seat.');
    const id = watch.seat;
    if (!isSeatId(id) || !door.workshop().has(id)) return refuseUpgrade(socket, 404, 'No such seat.');
    const target = door.workshop().target(id);
    if ('waiting' in target) return refuseUpgrade(socket, 503, target.waiting);
    return forwardUpgrade(req, socket, head, { ...target, path: `${RUNNER_PATHS.watch}${url.search}` });
  }
  if (url.pathname !== RUNNER_PATHS.terminal) return refuseUpgrade(socket, 404, 'No such socket.');
  if (who.who.kind !== 'learner') return refuseUpgrade(socket, 403, 'The instructor has no seat of their own.');
  const seat = who.who.seat;
  const target = door.workshop().target(seat);
  if ('waiting' in target) return refuseUpgrade(socket, 503, target.waiting);
  forwardUpgrade(req, socket, head, { ...target, path: `${url.pathname}${url.search}` }, () => door.workshop().touch(seat));
}
