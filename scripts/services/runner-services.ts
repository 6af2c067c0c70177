/**
 * The runner's services behind small interfaces, wired in one place: `createRunner({ services })`
 * (scripts/server/app.ts) builds the routes over them, the CLI commands use the same ones, and
 * tests pass fakes for the parts they play. Lower layers take what they need as arguments (the
 * cluster manager is handed the labs' image list), so nothing below this file knows the labs.
 */
import { ClusterManager } from '../clusters/manager.ts';
import type { Mode } from '../catalogue/modes.ts';
import { explainLive, type LiveOptions } from '../dataplane/live.ts';
import { labImages } from '../labs/images.ts';
import { runPreflight } from '../preflight/index.ts';
import { realSystem } from '../preflight/system.ts';
import type { PreflightSystem } from '../preflight/types.ts';
import type { ExplainResponse } from '../wire/explain.ts';
import { traceLive, type TraceOptions } from '../dataplane/trace/live-trace.ts';
import type { TraceRequest, TraceResult } from '../wire/trace.ts';

/** What the API and the terminals need of the cluster manager. */
export type ClusterService = Pick<ClusterManager, 'events' | 'status' | 'statusAll' | 'ensure' | 'delete'>;

/** A live read of one Service's dataplane on a running cluster. */
export type ExplainLive = (mode: Mode, service: string, opts: LiveOptions) => Promise<ExplainResponse>;

/** A trace of requests to one Service through a running cluster's node (issue 40). */
export type TraceLive = (mode: Mode, req: TraceRequest, opts: TraceOptions) => Promise<TraceResult>;

export interface RunnerServices {
  clusters: ClusterService;
  explainLive: ExplainLive;
  traceLive: TraceLive;
  /** `dplab doctor`'s checks, for GET /api/doctor. */
  preflight: typeof runPreflight;
  /** The host's facts (memory for starting a cluster ahead); tests play other machines. */
  system: PreflightSystem;
}

let shared: ClusterManager | undefined;

/** The process's one cluster manager, made on first use: the CLI and the server share it. */
export function sharedClusterManager(): ClusterManager {
  shared ??= new ClusterManager({ imagesFor: labImages });
  return shared;
}

/** The real services, with any of them replaced. */
export function runnerServices(overrides: Partial<RunnerServices> = {}): RunnerServices {
  return {
    clusters: overrides.clusters ?? sharedClusterManager(),
    explainLive: overrides.explainLive ?? explainLive,
    traceLive: overrides.traceLive ?? traceLive,
    preflight: overrides.preflight ?? runPreflight,
    system: overrides.system ?? realSystem,
  };
}
