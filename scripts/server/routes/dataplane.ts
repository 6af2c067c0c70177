/**
 * Dataplane explorer API: one Service's path through a bundled fixture (works without Docker)
 * or through a running cluster's node. Every id from the query is matched against a known list
 * (modes, fixtures, nodes) or a strict pattern before anything is read.
 */
import { isMode, MODES } from '../../catalogue/modes.ts';
import { DplabError, unknownId } from '../../base/errors.ts';
import { explainView, isServiceRef, servicesIn } from '../../dataplane/explain-view.ts';
import { listFixtures, loadFixture } from '../../dataplane/fixture-catalog.ts';
import type { ExplainLive, TraceLive } from '../../services/runner-services.ts';
import { traceRequestSchema } from '../../wire/trace.ts';
import { describeIssues } from '../../wire/validate.ts';
import { sendJson, type Route } from '../core/router.ts';

export type { ExplainLive, TraceLive };

function required(url: URL, name: string): string {
  const v = url.searchParams.get(name);
  if (v === null || v === '') throw new DplabError(`Query parameter "${name}" is required.`, { status: 400 });
  return v;
}

function serviceParam(url: URL): string {
  const s = required(url, 'service');
  if (!isServiceRef(s))
    throw new DplabError(`"${s.slice(0, 80)}" is not a Service: give namespace/name, e.g. default/web.`, { status: 400 });
  return s;
}

/** The routes, over a live reader and tracer (tests pass their own). */
export function dataplaneRoutes(live: ExplainLive, trace: TraceLive): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/dataplane/fixtures',
      handler(_req, res) {
        sendJson(res, 200, { fixtures: listFixtures() });
      },
    },
    {
      method: 'GET',
      path: '/api/dataplane/fixture',
      handler(_req, res, ctx) {
        const { info, model } = loadFixture(required(ctx.url, 'format'), required(ctx.url, 'name'));
        const service = serviceParam(ctx.url);
        const view = explainView(model, service, { source: 'fixture', fixture: info.id, node: info.node });
        if (!view) {
          throw new DplabError(`Service ${service} is not in the fixture ${info.id}. Known: ${servicesIn(model).join(', ')}.`, {
            fix: 'Headless Services (clusterIP: None) never appear: no proxy rules are written for them.',
            status: 404,
          });
        }
        sendJson(res, 200, view);
      },
    },
    {
      method: 'GET',
      path: '/api/dataplane/:mode',
      async handler(_req, res, ctx) {
        const mode = ctx.params.mode;
        if (!isMode(mode)) throw unknownId('mode', mode ?? '', MODES);
        const service = serviceParam(ctx.url);
        const node = ctx.url.searchParams.get('node') || undefined;
        sendJson(res, 200, await live(mode, service, { node, signal: ctx.signal }));
      },
    },
    {
      // Changes the node for a few seconds (a trace rule or table, removed before the answer), so POST.
      method: 'POST',
      path: '/api/dataplane/:mode/trace',
      async handler(_req, res, ctx) {
        const mode = ctx.params.mode;
        if (!isMode(mode)) throw unknownId('mode', mode ?? '', MODES);
        const body = traceRequestSchema.safeParse(ctx.body ?? {});
        if (!body.success) throw new DplabError(`Bad trace request: ${describeIssues(body.error)}.`, { status: 400 });
        sendJson(res, 200, await trace(mode, body.data, { signal: ctx.signal }));
      },
    },
  ];
}
