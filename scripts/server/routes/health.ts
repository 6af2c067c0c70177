import type { Route } from '../core/router.ts';
import { sendJson } from '../core/router.ts';

const startedAt = Date.now();

/** The one open route: says the runner is alive, nothing more. */
export const healthRoutes: Route[] = [
  {
    method: 'GET',
    path: '/api/health',
    public: true,
    handler(_req, res) {
      sendJson(res, 200, { ok: true, name: 'dataplane-lab', uptimeSeconds: Math.round((Date.now() - startedAt) / 1000) });
    },
  },
];
