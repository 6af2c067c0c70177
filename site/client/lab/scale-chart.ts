/**
 * The scale-compare chart: every measurement this browser kept (measurements.ts), drawn as
 * inline SVG (no chart library) — rules or entries against generated Services, one line per
 * mode — plus kube-proxy's sync time, and a table with every number for screen readers and
 * for copying. Colours are Starlight's, so dark and light themes both work; each mode also
 * has its own dash pattern, so the lines differ without colour.
 */
import { loadMeasurements, recordMeasurement, saveMeasurements, type Figure, type Measurement } from './measurements.ts';
import { richText } from './result-view.ts';
import { chartModel, DEFAULT_SIZE, linePath, type ChartModel, type ChartValue } from './scale-chart-model.ts';
import { replacesKubeProxy, type Mode } from '../../../scripts/wire/modes.ts';

const SVG_NS = 'http://www.w3.org/2000/svg';
/** Each mode's line: its colour and its own dash pattern (a mode without them does not compile). */
const COLOUR: Readonly<Record<string, string>> = {
  iptables: 'var(--sl-color-orange)',
  ipvs: 'var(--sl-color-blue)',
  nftables: 'var(--sl-color-green)',
  cilium: 'var(--sl-color-purple)',
} satisfies Record<Mode, string>;
const DASH: Readonly<Record<string, string>> = { iptables: 'none', ipvs: '8 4', nftables: '2 4', cilium: '10 4 2 4' } satisfies Record<
  Mode,
  string
>;
const colour = (mode: string) => COLOUR[mode] ?? 'var(--sl-color-accent)';
const num = (v: number) => v.toLocaleString('en', { maximumFractionDigits: 1 });

export interface ChartText {
  id: string;
  title: string;
  yLabel: string;
  /** What one point says, for the SVG's description and each point's tooltip. */
  point(mode: string, services: number, value: number): string;
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

function html<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, className?: string): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (text !== undefined) el.textContent = text;
  if (className) el.className = className;
  return el;
}

/** A line chart from the model: grid, ticks, axis titles, one <g data-mode> per series. */
function drawChart(model: ChartModel, text: ChartText): SVGSVGElement {
  const { plot, size } = model;
  const root = svg('svg', {
    viewBox: `0 0 ${size.width} ${size.height}`,
    role: 'img',
    'aria-labelledby': `${text.id}-title ${text.id}-desc`,
    class: `dplab-chart ${text.id}`,
  });
  root.append(
    svg('title', { id: `${text.id}-title` }, text.title),
    svg(
      'desc',
      { id: `${text.id}-desc` },
      model.series.map((s) => s.points.map((p) => text.point(s.mode, p.services, p.value)).join('; ')).join('. '),
    ),
  );
  const axes = svg('g', { class: 'dplab-chart-axes', 'aria-hidden': 'true' });
  for (const t of model.yTicks) {
    axes.append(
      svg('line', { x1: plot.left, x2: plot.right, y1: t.pos, y2: t.pos, style: 'stroke: var(--sl-color-gray-5)' }),
      svg('text', { x: plot.left - 6, y: t.pos + 4, 'text-anchor': 'end' }, num(t.value)),
    );
  }
  for (const t of model.xTicks) {
    axes.append(
      svg('line', { x1: t.pos, x2: t.pos, y1: plot.bottom, y2: plot.bottom + 4, style: 'stroke: var(--sl-color-gray-3)' }),
      svg('text', { x: t.pos, y: plot.bottom + 16, 'text-anchor': 'middle' }, num(t.value)),
    );
  }
  axes.append(
    svg('line', { x1: plot.left, x2: plot.right, y1: plot.bottom, y2: plot.bottom, style: 'stroke: var(--sl-color-gray-3)' }),
    svg('text', { x: (plot.left + plot.right) / 2, y: size.height - 4, 'text-anchor': 'middle' }, 'generated Services'),
    // Above the axis rather than rotated beside it: readable, and clear of the tick labels.
    svg('text', { x: 2, y: plot.top - 12, 'text-anchor': 'start' }, text.yLabel),
  );
  root.append(axes);
  for (const s of model.series) {
    const g = svg('g', { class: 'dplab-chart-series', 'data-mode': s.mode, style: `stroke: ${colour(s.mode)}; fill: ${colour(s.mode)}` });
    g.append(
      svg('path', {
        d: linePath(s.points),
        fill: 'none',
        'stroke-width': 2.5,
        'stroke-dasharray': DASH[s.mode] ?? 'none',
        'stroke-linejoin': 'round',
      }),
    );
    for (const p of s.points) {
      const dot = svg('circle', { cx: p.x.toFixed(1), cy: p.y.toFixed(1), r: 4 });
      dot.append(svg('title', {}, text.point(s.mode, p.services, p.value)));
      g.append(dot);
    }
    root.append(g);
  }
  return root;
}

/** Mode names with a swatch in the series' colour and dash; `what` says what each mode counts. */
function legend(modes: string[], what: (mode: string) => string): HTMLUListElement {
  const ul = html('ul', undefined, 'dplab-chart-legend');
  for (const mode of modes) {
    const li = html('li');
    li.dataset.mode = mode;
    const swatch = svg('svg', { viewBox: '0 0 28 8', width: 28, height: 8, 'aria-hidden': 'true' });
    swatch.append(
      svg('line', {
        x1: 1,
        x2: 27,
        y1: 4,
        y2: 4,
        'stroke-width': 2.5,
        'stroke-dasharray': DASH[mode] ?? 'none',
        style: `stroke: ${colour(mode)}`,
      }),
    );
    li.append(swatch, html('strong', mode));
    if (what(mode)) li.append(' ', richText(what(mode)));
    ul.append(li);
  }
  return ul;
}

/** One chart with its legend and caption, from measurements (the learner's, or recorded ones). */
export function figure(
  list: readonly Measurement[],
  value: ChartValue,
  text: ChartText,
  what: (mode: string) => string,
  note: string,
  height: number,
): HTMLElement {
  const model = chartModel(list, value, { ...DEFAULT_SIZE, height });
  const fig = html('figure', undefined, 'dplab-chart-figure');
  fig.append(
    drawChart(model, text),
    legend(
      model.series.map((s) => s.mode),
      what,
    ),
    html('figcaption', note),
  );
  return fig;
}

/** One row group per mode, headed by the mode and what it counts; one row per Service count. */
function table(list: Measurement[], modes: string[]): HTMLTableElement {
  const t = html('table', undefined, 'dplab-chart-table');
  t.createCaption().textContent = 'Every measurement kept in this browser';
  const head = t.createTHead().insertRow();
  // The connection column only once a connection was timed: five columns already fill a phone.
  const connect = list.some((m) => m.connectUs !== undefined);
  const headers = ['Mode (what is counted)', 'Services', 'Rules or entries', 'Sync time, average', 'Sync time, 90th percentile'];
  for (const h of connect ? [...headers, 'New connection, median'] : headers) {
    const th = html('th', h);
    th.scope = 'col';
    head.append(th);
  }
  for (const mode of modes) {
    const rows = list.filter((m) => m.mode === mode);
    const body = t.createTBody();
    body.dataset.mode = mode;
    rows.forEach((m, i) => {
      const row = body.insertRow();
      if (i === 0) {
        const th = html('th');
        th.scope = 'rowgroup';
        th.rowSpan = rows.length;
        th.append(html('strong', mode), html('br'), richText(m.entriesLabel));
        row.append(th);
      }
      row.insertCell().textContent = num(m.services);
      row.insertCell().textContent = num(m.entries);
      row.insertCell().textContent =
        m.syncMsAvg === undefined ? (replacesKubeProxy(mode) ? 'no kube-proxy' : 'not read') : `${num(m.syncMsAvg)} ms`;
      row.insertCell().textContent = m.syncMsP90 === undefined ? 'n/a' : `≤ ${num(m.syncMsP90)} ms`;
      if (connect) row.insertCell().textContent = m.connectUs === undefined ? 'not timed' : `${num(m.connectUs)} µs`;
    });
  }
  return t;
}

const ENTRIES_TEXT: ChartText = {
  id: 'dplab-scale-entries',
  title: 'Rules or entries on the node against generated Services, per mode',
  yLabel: 'rules or entries',
  point: (mode, services, v) => `${mode}: ${num(v)} at ${num(services)} Services`,
};
/** The connection chart's text; `id` tells the learner's chart from the recorded one. */
export function connectText(id: string, title: string): ChartText {
  return {
    id,
    title,
    yLabel: 'new connection, median (µs)',
    point: (mode, services, v) => `${mode}: ${num(v)} µs median at ${num(services)} Services`,
  };
}

/** The entries chart's text, for the recorded figures (the learner's has its own id). */
export function entriesText(id: string, title: string): ChartText {
  return { ...ENTRIES_TEXT, id, title };
}

const SYNC_TEXT: ChartText = {
  id: 'dplab-scale-sync',
  title: 'kube-proxy sync time (average) against generated Services, per mode',
  yLabel: 'sync time, ms',
  point: (mode, services, v) => `${mode}: ${num(v)} ms average sync at ${num(services)} Services`,
};

export class ScaleChart {
  private list: Measurement[];

  constructor(
    private readonly root: HTMLElement,
    private readonly lab: string,
  ) {
    this.list = loadMeasurements(lab);
    root.addEventListener('click', (ev) => {
      if (!(ev.target as HTMLElement).closest('[data-chart-action="forget"]')) return;
      this.list = [];
      saveMeasurements(this.lab, this.list);
      this.render();
    });
    this.render();
  }

  /** A check's figures, measured on `mode`'s cluster: kept, then drawn. */
  add(mode: string, figures: Record<string, Figure> | undefined): void {
    if (!figures) return;
    this.list = recordMeasurement(this.lab, mode, figures);
    this.render();
  }

  render(): void {
    const body = this.root.querySelector<HTMLElement>('.dplab-scale-chart-body') ?? this.root;
    if (!this.list.length) {
      body.replaceChildren(
        html(
          'p',
          'No measurements yet. Each Check on this page adds its numbers here; switch clusters and measure again to compare the modes.',
          'dplab-chart-empty',
        ),
      );
      return;
    }
    const what = (mode: string) => this.list.find((m) => m.mode === mode)?.entriesLabel ?? '';
    const modes = chartModel(this.list, 'entries').series.map((s) => s.mode);
    const parts = [
      figure(
        this.list,
        'entries',
        ENTRIES_TEXT,
        what,
        'Each mode counts its own kind of entry (see the legend); compare how each line grows, not only its height.',
        DEFAULT_SIZE.height,
      ),
    ];
    if (this.list.some((m) => m.connectUs !== undefined)) {
      parts.push(
        figure(
          this.list,
          'connectUs',
          connectText(
            'dplab-scale-connect',
            'A new TCP connection to a ClusterIP from the node, median, against generated Services, per mode',
          ),
          () => '',
          "Median of the connections the connection step's check timed from the first worker (on iptables to the Service whose KUBE-SERVICES rule came last).",
          180,
        ),
      );
    }
    if (this.list.some((m) => m.syncMsAvg !== undefined)) {
      parts.push(
        figure(
          this.list,
          'syncMsAvg',
          SYNC_TEXT,
          () => '',
          'Average of every sync since kube-proxy started, so later, larger syncs pull it up slowly. Cilium has no kube-proxy.',
          180,
        ),
      );
    }
    const forget = html('button', 'Forget these measurements');
    forget.type = 'button';
    forget.dataset.chartAction = 'forget';
    body.replaceChildren(...parts, table(this.list, modes), forget);
  }
}

/** Mount on the page's chart section when there is one (scale-compare only). */
export function mountScaleChart(root: HTMLElement | null, lab: string): ScaleChart | undefined {
  return root ? new ScaleChart(root, lab) : undefined;
}
