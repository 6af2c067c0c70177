/**
 * The presenter's broadcast: which terminal the watch socket mirrors. GET lists the open shells
 * and the one shown; POST `{ "terminal": "t3" }` pins one, `{ "terminal": null }` follows the
 * most recently opened learner shell again. Runner token only (the viewer token opens the
 * watch socket and nothing else).
 */
import { DplabError, unknownId } from '../../base/errors.ts';
import type { TerminalBroadcast } from '../../terminals/broadcast.ts';
import { sendJson, type Route } from '../core/router.ts';

export function broadcastRoutes(broadcast: TerminalBroadcast, viewerToken: string | undefined): Route[] {
  return [
    {
      // The runner token is the stronger credential, so its holder (the presenter) may hand this out.
      method: 'GET',
      path: '/api/terminal/viewer-link',
      handler(_req, res) {
        if (!viewerToken) throw new DplabError('This runner has no viewer link.', { status: 404 });
        sendJson(res, 200, { path: `/watch/#viewer=${viewerToken}` });
      },
    },
    {
      method: 'GET',
      path: '/api/terminal/broadcast',
      handler(_req, res) {
        sendJson(res, 200, broadcast.state());
      },
    },
    {
      method: 'POST',
      path: '/api/terminal/broadcast',
      handler(_req, res, ctx) {
        const body = ctx.body;
        const terminal =
          typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { terminal?: unknown }).terminal : undefined;
        if (terminal !== null && typeof terminal !== 'string')
          throw new DplabError('The body must be {"terminal":"<id>"} or {"terminal":null}.', { status: 400 });
        if (!broadcast.pin(terminal))
          throw unknownId(
            'terminal',
            terminal ?? '',
            broadcast.state().terminals.map((t) => t.id),
          );
        sendJson(res, 200, broadcast.state());
      },
    },
  ];
}
