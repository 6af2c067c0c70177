import type { Route } from '../core/router.ts';
import { sendJson } from '../core/router.ts';

/** Lets a page ask "am I signed in?" (the gate has already checked the token when this runs). */
export const sessionRoutes: Route[] = [
  {
    method: 'GET',
    path: '/api/session',
    handler(_req, res) {
      sendJson(res, 200, { ok: true });
    },
  },
];
