// What the explorer API answers for one Service, whether the model came from a live node or a
// bundled fixture: the public JSON frontends plus the diagram, the text table and the counts.
import type { Mode } from '../clusters/modes.ts';
import type { DataplaneModel, Format } from './model.ts';
import { toMermaid } from './mermaid.ts';
import { findService, toJson, type JsonFrontend } from './query.ts';
import { toText } from './text.ts';

export interface ExplainResponse {
  service: string;
  format: Format;
  source: 'live' | 'fixture';
  /** Live only: the mode whose cluster was read, its node names (control plane first). */
  mode?: Mode;
  nodes?: string[];
  /** The node whose dataplane this is (a fixture says which node it was printed from). */
  node?: string;
  /** Fixture only: `<format>/<name>`. */
  fixture?: string;
  /** The headline count (rules, virtual servers, …) and finer counts, for "how big is this". */
  entries: number;
  entriesLabel: string;
  counts: Record<string, number>;
  frontends: JsonFrontend[];
  mermaid: string;
  text: string;
  /** What the parser skipped or had to guess (unknown lines or types, an unknown Service CIDR); absent when nothing. */
  notes?: string[];
}

/** Kubernetes namespace / Service name: DNS labels. Checked before anything reads a cluster. */
const SERVICE_REF = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function isServiceRef(value: string): boolean {
  return SERVICE_REF.test(value);
}

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
