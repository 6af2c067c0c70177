/**
 * The runner's paths that something besides its routes names: the terminal and watch sockets,
 * and the routes after which a seat's progress or clusters may have changed. The runner's
 * routes take their paths from here (scripts/server/routes/labs.ts, scripts/server/app.ts), and
 * the portal, which forwards a learner's calls to their seat's runner and must not load the
 * runner to know them, reads the same list. Paths only: this module imports nothing.
 */
export const RUNNER_PATHS = {
  /** The learner's terminal socket. */
  terminal: '/api/terminal',
  /** The read-only mirror of the broadcast terminal (the instructor watches a seat through it). */
  watch: '/api/terminal/watch',
  /** Every cluster route is under it (`/api/clusters/:mode/up`, …). */
  clusters: '/api/clusters',
  stepCheck: '/api/labs/:lab/steps/:step/check',
  stepSolve: '/api/labs/:lab/steps/:step/solve',
  stepReset: '/api/labs/:lab/steps/:step/reset',
  labReset: '/api/labs/:lab/reset',
  progress: '/api/progress',
} as const;

/** The routes that, called with any method but GET, may change a learner's progress. */
export const PROGRESS_PATHS: readonly string[] = [
  RUNNER_PATHS.stepCheck,
  RUNNER_PATHS.stepSolve,
  RUNNER_PATHS.stepReset,
  RUNNER_PATHS.labReset,
  RUNNER_PATHS.progress,
];
