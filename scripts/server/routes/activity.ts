/**
 * What the learner did on this runner, for the workshop portal's dashboard: GET /api/activity
 * (progress and the last check of each step), and GET /api/activity/events, a Server-Sent
 * Events stream that sends the activity when it changes (`activity`) and each cluster's state
 * when it changes (`cluster`), after a snapshot of both. The portal keeps one stream per seat
 * open instead of asking every seat every few seconds.
 */
import { activityChanges } from '../../labs/activity-changes.ts';
import { checkLog } from '../../labs/check-log.ts';
import { readProgress } from '../../labs/progress.ts';
import { loadLabs } from '../../labs/registry.ts';
import type { ClusterService } from '../../services/runner-services.ts';
import type { Activity, ActivityCluster } from '../../wire/activity.ts';
import { sendJson, type Route } from '../core/router.ts';
import { holdEventStream, sendEvent, startEventStream } from '../core/sse.ts';

function activity(): Activity {
  return { progress: readProgress(loadLabs()), checks: checkLog() };
}

export function activityRoutes(clusters: ClusterService, heartbeatMs: number): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/activity',
      handler(_req, res) {
        sendJson(res, 200, activity());
      },
    },
    {
      method: 'GET',
      path: '/api/activity/events',
      async handler(_req, res, ctx) {
        startEventStream(res);
        // Several changes in one turn (a pass logs a check and writes progress) make one event.
        let pending = false;
        const offActivity = activityChanges.on(() => {
          if (pending) return;
          pending = true;
          setImmediate(() => {
            pending = false;
            sendEvent(res, 'activity', activity());
          });
        });
        const offClusters = clusters.events.on((e) => {
          if (e.type === 'status') sendEvent(res, 'cluster', { mode: e.mode, state: e.status.state } satisfies ActivityCluster);
        });
        const closed = holdEventStream(res, ctx.signal, heartbeatMs, () => {
          offActivity();
          offClusters();
        });
        // Subscribed first, then the snapshot: nothing falls between the two.
        sendEvent(res, 'activity', activity());
        try {
          for (const c of await clusters.statusAll({ signal: ctx.signal }))
            sendEvent(res, 'cluster', { mode: c.mode, state: c.state } satisfies ActivityCluster);
        } catch {
          // The client left while the clusters were read; `closed` settles the rest.
        }
        await closed;
      },
    },
  ];
}
