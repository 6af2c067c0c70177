/**
 * Cluster API: status, start (202, progress on the event stream), delete, doctor, and the
 * Server-Sent Events stream the cluster panel listens to. The security gate ran before us.
 */
import { clusterHandle } from '../../clusters/providers.ts';
import type { ClusterService, RunnerServices } from '../../services/runner-services.ts';
import { isMode, MODES, seatId, type Mode } from '../../catalogue/modes.ts';
import { unknownId } from '../../base/errors.ts';
import { sendJson, type Route } from '../core/router.ts';
import { holdEventStream, sendEvent as sse, startEventStream } from '../core/sse.ts';
import { SSE_HEARTBEAT_MS } from '../../wire/events.ts';
import { clusterWarmRequestSchema, type ClusterWarm } from '../../wire/clusters.ts';
import { describeIssues } from '../../wire/validate.ts';
import { DplabError } from '../../base/errors.ts';
import { warmDecision } from '../../clusters/warm-decision.ts';
import { preflightError } from '../../preflight/index.ts';

/** Proxies and browsers drop idle streams; a comment line every 15 s keeps it open. */

function modeParam(value: string | undefined): Mode {
  if (!isMode(value)) throw unknownId('mode', value ?? '', MODES);
  return value;
}

export interface ClusterRouteOptions {
  heartbeatMs?: number;
  /** Whether this runner may start a cluster ahead (`dplab serve --no-warm` turns it off). */
  warm?: boolean;
}

/** The routes, over the runner's cluster service and preflight. */
export function clusterRoutes(
  services: Pick<RunnerServices, 'clusters' | 'preflight' | 'system'>,
  opts: ClusterRouteOptions = {},
): Route[] {
  const manager: ClusterService = services.clusters;
  const heartbeatMs = opts.heartbeatMs ?? SSE_HEARTBEAT_MS;
  return [
    {
      method: 'GET',
      path: '/api/clusters',
      async handler(_req, res, ctx) {
        sendJson(res, 200, { clusters: await manager.statusAll({ signal: ctx.signal }) });
      },
    },
    {
      // Before `/api/clusters/:mode`, which would otherwise take "events" for a mode.
      method: 'GET',
      path: '/api/clusters/events',
      async handler(_req, res, ctx) {
        startEventStream(res);
        // Subscribe first, then send the snapshot, so no event falls between the two.
        const closed = holdEventStream(
          res,
          ctx.signal,
          heartbeatMs,
          manager.events.on((e) => sse(res, e.type, e)),
        );
        try {
          sse(res, 'snapshot', { clusters: await manager.statusAll({ signal: ctx.signal }) });
        } catch {
          // The client left while we read the status; `closed` settles the rest.
        }
        await closed;
      },
    },
    {
      method: 'GET',
      path: '/api/clusters/:mode',
      async handler(_req, res, ctx) {
        sendJson(res, 200, await manager.status(modeParam(ctx.params.mode), { signal: ctx.signal }));
      },
    },
    {
      method: 'POST',
      path: '/api/clusters/:mode/up',
      handler(_req, res, ctx) {
        const mode = modeParam(ctx.params.mode);
        const body = (ctx.body ?? {}) as { retain?: unknown };
        // Not tied to this request: provisioning outlives it, progress goes to the event stream.
        manager.ensure(mode, { retain: body.retain === true }).catch(() => undefined);
        sendJson(res, 202, { mode, state: 'provisioning', events: '/api/clusters/events' });
      },
    },
    {
      // A lab page asks for the next lab's cluster once its own is ready; warm-decision.ts says
      // whether, and a decline is an answer (200), not an error: the page shows its sentence.
      method: 'POST',
      path: '/api/clusters/:mode/warm',
      async handler(_req, res, ctx) {
        const mode = modeParam(ctx.params.mode);
        const body = clusterWarmRequestSchema.safeParse(ctx.body ?? {});
        if (!body.success) throw new DplabError(`Bad warm request: ${describeIssues(body.error)}.`, { status: 400 });
        const decision = await warmDecision({
          mode,
          optedOut: body.data.optedOut === true,
          enabled: opts.warm ?? true,
          seat: seatId() !== undefined,
          clusters: () => manager.statusAll({ signal: ctx.signal }),
          system: services.system,
          blocker: async () =>
            preflightError(await services.preflight({ modes: [mode], clusters: 1, system: services.system, signal: ctx.signal }))?.message,
        });
        if (!decision.warm) {
          const answer: ClusterWarm = { outcome: 'declined', mode, reason: decision.reason, message: decision.message };
          return sendJson(res, 200, answer);
        }
        // As `up`: provisioning outlives this request; DELETE /api/clusters/:mode cancels it.
        manager.ensure(mode, { ahead: true }).catch(() => undefined);
        const answer: ClusterWarm = { outcome: 'warming', mode, message: decision.message, events: '/api/clusters/events' };
        sendJson(res, 202, answer);
      },
    },
    {
      // The node names a lab page offers as terminal tabs (only while the cluster is ready).
      method: 'GET',
      path: '/api/clusters/:mode/nodes',
      async handler(_req, res, ctx) {
        const mode = modeParam(ctx.params.mode);
        const status = await manager.status(mode, { signal: ctx.signal });
        if (status.state !== 'ready') return sendJson(res, 200, { mode, nodes: [] });
        sendJson(res, 200, { mode, nodes: await clusterHandle(mode).nodes({ signal: ctx.signal }) });
      },
    },
    {
      method: 'DELETE',
      path: '/api/clusters/:mode',
      async handler(_req, res, ctx) {
        sendJson(res, 200, await manager.delete(modeParam(ctx.params.mode)));
      },
    },
    {
      method: 'GET',
      path: '/api/doctor',
      async handler(_req, res, ctx) {
        const m = ctx.url.searchParams.get('mode');
        const modes = m === null || m === '' ? [...MODES] : [modeParam(m)];
        const report = await services.preflight({ modes, clusters: 1, signal: ctx.signal });
        sendJson(res, 200, { ok: report.ok, modes, findings: report.findings });
      },
    },
  ];
}
