/** All API routes, over the runner's services. Each area keeps its routes in its own file; add one spread per area. */
import type { RunnerServices } from '../../services/runner-services.ts';
import type { Route } from '../core/router.ts';
import { healthRoutes } from './health.ts';
import { sessionRoutes } from './session.ts';
import { clusterRoutes } from './clusters.ts';
import { SSE_HEARTBEAT_MS } from '../../wire/events.ts';
import { labRoutes } from './labs.ts';
import { activityRoutes } from './activity.ts';
import { dataplaneRoutes } from './dataplane.ts';
import { broadcastRoutes } from './broadcast.ts';
import { replayRoutes } from './replay.ts';
import { TerminalBroadcast } from '../../terminals/broadcast.ts';

export interface RouteOptions {
  /** The event stream's keep-alive interval (tests shorten it). */
  sseHeartbeatMs?: number;
  /** The runner's broadcast (which terminal the watch socket mirrors). */
  broadcast?: TerminalBroadcast;
  /** The read-only viewer token (the presenter's page asks for its link). */
  viewerToken?: string;
  /** Whether the runner may start the next lab's cluster ahead (`dplab serve --no-warm`: no). */
  warm?: boolean;
}

export function apiRoutes(services: RunnerServices, opts: RouteOptions = {}): readonly Route[] {
  return [
    ...healthRoutes,
    ...sessionRoutes,
    ...clusterRoutes(services, { heartbeatMs: opts.sseHeartbeatMs, warm: opts.warm }),
    ...labRoutes,
    ...replayRoutes(),
    ...activityRoutes(services.clusters, opts.sseHeartbeatMs ?? SSE_HEARTBEAT_MS),
    ...dataplaneRoutes(services.explainLive, services.traceLive),
    ...broadcastRoutes(opts.broadcast ?? new TerminalBroadcast(), opts.viewerToken),
  ];
}
