/**
 * What a lab page offers when no cluster can start here: the blocker (Docker, kind) with its
 * fix, and each step replayed from its recordings. Ids are matched against the registry (404
 * listing the known ones); nothing the browser sends reaches a path or a command.
 */
import { existsSync } from 'node:fs';
import { isMode, kubeconfigPath, MODES } from '../../catalogue/modes.ts';
import { unknownId } from '../../base/errors.ts';
import { clusterProviders } from '../../clusters/providers.ts';
import { requireLab, requireMode, requireStep } from '../../labs/registry.ts';
import { replayStep } from '../../labs/step-replay.ts';
import { startBlocker } from '../../preflight/blocker.ts';
import type { ErrorJson } from '../../wire/errors.ts';
import type { ClusterBlocker } from '../../wire/replay.ts';
import { sendJson, type Route } from '../core/router.ts';

export function replayRoutes(): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/clusters/:mode/blocker',
      async handler(_req, res, ctx) {
        const mode = ctx.params.mode;
        if (!isMode(mode)) throw unknownId('mode', mode ?? '', MODES);
        // A cluster that exists (its kubeconfig was written) is not kept from starting; the sim
        // provider needs neither Docker nor kind.
        const asks = clusterProviders().provider(mode).id === 'kind' && !existsSync(kubeconfigPath(mode));
        const found: ErrorJson | undefined = asks ? await startBlocker(mode, undefined, ctx.signal) : undefined;
        sendJson(res, 200, { mode, blocker: found ?? null } satisfies ClusterBlocker);
      },
    },
    {
      method: 'GET',
      path: '/api/labs/:lab/steps/:step/replay',
      handler(_req, res, ctx) {
        const lab = requireLab(ctx.params.lab);
        const step = requireStep(lab, ctx.params.step);
        const mode = requireMode(lab, ctx.url.searchParams.get('mode') ?? undefined);
        sendJson(res, 200, replayStep(lab, step, mode));
      },
    },
  ];
}
