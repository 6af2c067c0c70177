/**
 * Draws one explorer answer (or error) into a column of <dplab-dataplane>: the headline with the
 * rule/entry count, the mermaid path, the frontends → backends → shares table, and the plain
 * text `dplab explain` prints. DOM only; fetching and state live in dataplane-panel.ts.
 */
import type { ExplainResponse, JsonFrontend } from '../../scripts/wire/explain.ts';
import { renderMermaid } from './mermaid-render.ts';
import { showDiagram } from './diagram-view.ts';
import { richText } from './rich-text.ts';
import { el } from './dom.ts';

/** Same rounding as the diagram and `dplab explain`, so the three agree. */
const PERCENT_DIGITS = 1;

export { el } from './dom.ts';

export function percent(share: number): string {
  return `${(share * 100).toFixed(PERCENT_DIGITS)}%`;
}

/** "default/web on dplab-iptables-worker · iptables-save · 57 rules" */
export function summaryOf(r: ExplainResponse): string {
  const where = r.source === 'fixture' ? `fixture ${r.fixture} (printed on ${r.node})` : `${r.node} (${r.mode} cluster)`;
  return `${r.service} on ${where} · ${r.format} · ${r.entries} ${r.entriesLabel}`;
}

/** The type column: `unknown` means the dump alone cannot say (the answer's notes say why and how to tell). */
function typeOf(f: JsonFrontend): string {
  return f.type === 'unknown' ? 'type unknown' : f.type;
}

function flagsOf(f: JsonFrontend): string[] {
  return [
    f.localOnly ? 'Local traffic policy' : '',
    f.dropsWithoutLocalEndpoints ? 'dropped here: no local endpoint' : '',
    f.affinity ? `session affinity ClientIP, ${f.affinity.timeoutSeconds} s` : '',
    f.sourceRanges?.length ? `only from ${f.sourceRanges.join(', ')}` : '',
  ].filter(Boolean);
}

function sharesTable(r: ExplainResponse): HTMLTableElement {
  const body = el('tbody');
  for (const f of r.frontends) {
    const label = el(
      'td',
      { class: 'dp-frontend', rowspan: String(Math.max(1, f.backends.length)) },
      el('code', {}, `${f.ip}:${f.port}/${f.protocol}`),
      ` ${typeOf(f)}`,
    );
    const flags = flagsOf(f);
    if (flags.length) label.append(el('br'), el('small', {}, flags.join(' · ')));
    if (f.backends.length === 0) {
      body.append(el('tr', {}, label, el('td', { class: 'dp-backend' }, 'none'), el('td', { class: 'dp-share' }, '—')));
      continue;
    }
    f.backends.forEach((b, i) => {
      const row = el(
        'tr',
        {},
        el('td', { class: 'dp-backend' }, el('code', {}, `${b.ip}:${b.port}`)),
        el('td', { class: 'dp-share' }, percent(b.share)),
      );
      if (i === 0) row.prepend(label);
      body.append(row);
    });
  }
  return el(
    'table',
    { class: 'dp-shares' },
    el('caption', {}, 'Frontends, their backends, and the share of new connections each backend gets'),
    el(
      'thead',
      {},
      el('tr', {}, el('th', { scope: 'col' }, 'Frontend'), el('th', { scope: 'col' }, 'Backend'), el('th', { scope: 'col' }, 'Share')),
    ),
    body,
  );
}

/** A table in a box that scrolls sideways on a narrow column: focusable and named, so a keyboard can scroll it. */
export function tableWrap(table: HTMLTableElement, label: string): HTMLDivElement {
  return el('div', { class: 'dp-table-wrap', role: 'group', 'aria-label': label, tabindex: '0' }, table);
}

/** Draws `source` into `diagram` (replacing what it held); on a bad source, says so and shows the source. */
export function drawDiagram(diagram: HTMLElement, source: string, label: string): Promise<void> {
  delete diagram.dataset.rendered;
  return renderMermaid(source).then(
    (svg) => {
      showDiagram(diagram, svg, label);
      diagram.dataset.rendered = '';
    },
    (err: unknown) => {
      diagram.replaceChildren(
        el('p', {}, `The diagram could not be drawn (${err instanceof Error ? err.message : String(err)}). Its source:`),
        el('pre', {}, source),
      );
    },
  );
}

/** The label a reader's tools give the diagram of `r`. */
export function diagramLabel(r: ExplainResponse): string {
  return `Path of ${r.service} through ${r.format}`;
}

/**
 * Fills `target` with the answer; the diagram arrives when mermaid has loaded. `below`, given the
 * diagram's box, makes what goes under it (the trace control), before the table.
 */
export function renderResult(target: HTMLElement, r: ExplainResponse, below?: (diagram: HTMLElement) => HTMLElement): Promise<void> {
  const diagram = el('div', { class: 'dp-diagram' }, el('p', { class: 'dp-muted' }, 'Drawing the diagram…'));
  const counts = Object.entries(r.counts)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  target.replaceChildren(
    el('p', { class: 'dp-summary' }, el('strong', {}, summaryOf(r))),
    ...(counts ? [el('p', { class: 'dp-muted dp-counts' }, counts)] : []),
    // What the parser skipped or guessed (an IPVS read without its Service range): next to the table it qualifies.
    ...(r.notes ?? []).map((n) => el('p', { class: 'dp-muted dp-parse-note' }, el('strong', {}, 'Note: '), richText(n))),
    diagram,
    ...(below ? [below(diagram)] : []),
    tableWrap(sharesTable(r), `Frontends and backends of ${r.service}`),
    // Scrolls sideways on a narrow column: focusable, so a keyboard can scroll it.
    el('details', {}, el('summary', {}, 'As text (what dplab explain prints)'), el('pre', { tabindex: '0' }, r.text)),
  );
  return drawDiagram(diagram, r.mermaid, diagramLabel(r));
}

export interface ShownError {
  message: string;
  fix?: string;
  details?: string;
  status?: number;
}

export function renderError(target: HTMLElement, e: ShownError, extraFix?: string): void {
  const box = el('div', { class: 'dp-error', role: 'alert' }, el('p', {}, el('strong', {}, 'Error: '), richText(e.message)));
  if (e.fix) box.append(el('p', {}, el('strong', {}, 'Fix: '), richText(e.fix)));
  if (extraFix) box.append(el('p', {}, richText(extraFix)));
  if (e.details) box.append(el('details', {}, el('summary', {}, 'Details'), el('pre', {}, e.details)));
  target.replaceChildren(box);
}
