/**
 * The lab API. The browser names a lab, a step and a mode; each is looked up in the registry
 * (unknown → 404 listing the known ids) and nothing it sends reaches a path or a command.
 * A check always answers 200 with pass / fail / error: an unreachable cluster is an `error`
 * result with a fix, which the page shows differently from a learner's unfinished step.
 */
import { seatId, type Mode } from '../../catalogue/modes.ts';
import { DplabError, errorToJson } from '../../base/errors.ts';
import { runCheck } from '../../labs/engine.ts';
import { logCheck } from '../../labs/check-log.ts';
import { clearPasses, mergeProgress, readProgress, recordPass } from '../../labs/progress.ts';
import { gotoStep } from '../../labs/goto.ts';
import { loadLabs, requireLab, requireMode, requireStep } from '../../labs/registry.ts';
import { resetLab } from '../../labs/reset.ts';
import { ensureLabSetup } from '../../labs/setup.ts';
import { applySolution } from '../../labs/solve.ts';
import { labDetail, labSummary } from '../../labs/view.ts';
import { sendJson, type Route, type RouteContext } from '../core/router.ts';
import { sendEvent, startEventStream } from '../core/sse.ts';
import { RUNNER_PATHS } from '../../wire/runner-paths.ts';

/** `{ mode }` from a POST body; anything else in it is ignored. */
function modeFrom(body: unknown): unknown {
  return bodyObject(body).mode;
}

function bodyObject(body: unknown): { mode?: unknown; reset?: unknown } {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new DplabError('The request body must be a JSON object such as {"mode":"iptables"}.', { status: 400 });
  return body as { mode?: unknown; reset?: unknown };
}

/** One solve or reset at a time per lab and mode: two would fight over the same namespace. */
const busy = new Set<string>();
async function exclusive<T>(lab: string, mode: Mode, work: () => Promise<T>): Promise<T> {
  const key = `${lab}/${mode}`;
  if (busy.has(key)) throw new DplabError(`${lab} on ${mode} is busy with a solve or reset; wait for it to finish.`, { status: 409 });
  busy.add(key);
  try {
    return await work();
  } finally {
    busy.delete(key);
  }
}

/** The lab, step and mode a step route names: ids looked up in the registry, 404 when unknown. */
function stepTarget(ctx: RouteContext) {
  // Refused before any work starts, so an exclusive run never begins on bad input.
  const reset = bodyObject(ctx.body).reset;
  if (reset !== undefined && typeof reset !== 'boolean') throw new DplabError('"reset" must be true or false.', { status: 400 });
  const lab = requireLab(ctx.params.lab);
  return { lab, step: requireStep(lab, ctx.params.step), mode: requireMode(lab, modeFrom(ctx.body)) };
}

export const labRoutes: Route[] = [
  {
    method: 'GET',
    path: '/api/labs',
    handler(_req, res) {
      sendJson(res, 200, { labs: loadLabs().map(labSummary) });
    },
  },
  {
    method: 'GET',
    path: '/api/labs/:lab',
    handler(_req, res, ctx) {
      sendJson(res, 200, labDetail(requireLab(ctx.params.lab)));
    },
  },
  {
    // The page asks on open and when the cluster becomes ready: files always, the cluster's part once.
    method: 'POST',
    path: '/api/labs/:lab/setup',
    async handler(_req, res, ctx) {
      const lab = requireLab(ctx.params.lab);
      const mode = requireMode(lab, modeFrom(ctx.body));
      if (busy.has(`${lab.id}/${mode}`))
        throw new DplabError(`${lab.id} on ${mode} is busy with a solve or reset; its setup is part of that.`, { status: 409 });
      sendJson(res, 200, await ensureLabSetup(lab, mode, { signal: ctx.signal }));
    },
  },
  {
    method: 'POST',
    path: RUNNER_PATHS.stepCheck,
    async handler(_req, res, ctx) {
      const { lab, step, mode } = stepTarget(ctx);
      const { observations: _observations, ...result } = await runCheck(lab, step, mode, { signal: ctx.signal });
      if (result.status === 'pass') await recordPass(loadLabs(), lab.id, step.id, mode);
      logCheck(result);
      sendJson(res, 200, result);
    },
  },
  {
    method: 'POST',
    path: RUNNER_PATHS.stepSolve,
    async handler(_req, res, ctx) {
      const { lab, step, mode } = stepTarget(ctx);
      sendJson(res, 200, await exclusive(lab.id, mode, () => applySolution(lab, step, mode, { signal: ctx.signal })));
    },
  },
  {
    method: 'POST',
    path: RUNNER_PATHS.stepReset,
    async handler(_req, res, ctx) {
      const { lab, step, mode } = stepTarget(ctx);
      const result = await exclusive(lab.id, mode, () => gotoStep(lab, step, mode, { reset: true, signal: ctx.signal }));
      if (result.status !== 'ready')
        throw new DplabError(result.message, { fix: result.fix, details: result.details, status: result.status === 'failed' ? 409 : 502 });
      sendJson(res, 200, { ...result, progress: readProgress(loadLabs()).labs[lab.id] });
    },
  },
  {
    // Fast-forward (or with {"reset":true} rewind) to the start of a step; progress streams as
    // Server-Sent Events (`info`, `action`), then one `result` (scripts/wire/goto.ts).
    method: 'POST',
    path: '/api/labs/:lab/steps/:step/goto',
    async handler(_req, res, ctx) {
      const { lab, step, mode } = stepTarget(ctx);
      const reset = bodyObject(ctx.body).reset === true;
      await exclusive(lab.id, mode, async () => {
        startEventStream(res);
        try {
          const result = await gotoStep(lab, step, mode, { reset, signal: ctx.signal, onEvent: (e) => sendEvent(res, e.type, e) });
          sendEvent(res, 'result', { type: 'result', result });
        } catch (err) {
          // Headers are out: the failure travels as an event the page reads like any other answer.
          sendEvent(res, 'error', { type: 'error', error: errorToJson(err) });
        } finally {
          res.end();
        }
      });
    },
  },
  {
    method: 'POST',
    path: RUNNER_PATHS.labReset,
    async handler(_req, res, ctx) {
      const lab = requireLab(ctx.params.lab);
      const mode = requireMode(lab, modeFrom(ctx.body));
      const result = await exclusive(lab.id, mode, () => resetLab(lab, mode, { signal: ctx.signal }));
      const progress = await clearPasses(loadLabs(), lab, mode);
      sendJson(res, 200, { ...result, progress: progress.labs[lab.id] });
    },
  },
  {
    method: 'GET',
    path: RUNNER_PATHS.progress,
    handler(_req, res) {
      sendJson(res, 200, readProgress(loadLabs()));
    },
  },
  {
    method: 'PUT',
    path: RUNNER_PATHS.progress,
    async handler(_req, res, ctx) {
      // In a workshop seat the dashboard reads this progress: passes there come from our own checks only.
      sendJson(res, 200, await mergeProgress(loadLabs(), ctx.body ?? {}, { passes: seatId() === undefined }));
    },
  },
];
