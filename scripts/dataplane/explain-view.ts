// What the explorer API answers for one Service, whether the model came from a live node or a
// bundled fixture: the public JSON frontends plus the diagram, the text table and the counts.
import type { ExplainResponse } from '../wire/explain.ts';
import type { DataplaneModel } from './model.ts';
import { toMermaid } from './mermaid.ts';
import { findService, toJson } from './query.ts';
import { toText } from './text.ts';

export { isServiceRef, type ExplainResponse } from '../wire/explain.ts';

/** Named Services present in a model (without port names), sorted, for "known: …" messages. */
export function servicesIn(model: DataplaneModel): string[] {
  return [...new Set(model.services.map((s) => s.service?.replace(/:.*$/, '')).filter((s): s is string => !!s))].sort();
}

type Where = Pick<ExplainResponse, 'source' | 'mode' | 'nodes' | 'node' | 'fixture'>;

/** The response for `service`, or null when the model has no entry for it. */
export function explainView(model: DataplaneModel, service: string, where: Where): ExplainResponse | null {
  const view = findService(model, service);
  if (!view) return null;
  return {
    service,
    format: model.format,
    ...where,
    entries: model.entries,
    entriesLabel: model.entriesLabel,
    counts: model.counts,
    frontends: toJson(view).frontends,
    mermaid: toMermaid(view, model.format),
    text: toText(view, model),
    ...(model.notes?.length ? { notes: model.notes } : {}),
  };
}
