/**
 * <dplab-dataplane service="lab-first-service/web" modes="iptables,nftables" sources="live:iptables,live:nftables">:
 * "Show the dataplane" for one Service, read from a running cluster's node (live) or from a
 * bundled fixture (no Docker needed), in one column or two side by side. Reads happen when the
 * learner asks (Show / Refresh), never on a timer: a live read runs commands on a node.
 */
import { clusterListSchema, type ClusterStatus } from '../../scripts/wire/clusters.ts';
import { explainResponseSchema, fixtureListSchema, isServiceRef, type FixtureInfo } from '../../scripts/wire/explain.ts';
import { isMode } from '../../scripts/wire/modes.ts';
import { el, renderError, renderResult, summaryOf, type ShownError } from './dataplane-result.ts';
import { blockerError } from './live-error.ts';
import { traceSection } from './trace-control.ts';
import { headingLevelAt } from './heading-level.ts';
import { api, RunnerUnavailable } from './runner-api.ts';
import { onPageModeChange, pageMode } from './page-mode.ts';

const DEFAULT_SERVICE = 'default/web';
const FIRST_WORKER = '';
const STATE_NOTE: Record<ClusterStatus['state'], string> = {
  ready: 'running',
  provisioning: 'starting',
  broken: 'not healthy',
  absent: 'not running',
};

interface Column {
  root: HTMLElement;
  source: HTMLSelectElement;
  node: HTMLSelectElement;
  note: HTMLParagraphElement;
  result: HTMLDivElement;
  controller?: AbortController;
}

export class DataplanePanel extends HTMLElement {
  #fixtures: FixtureInfo[] = [];
  #clusters = new Map<string, ClusterStatus>();
  /** Node names per mode, learned from the last live answer (no extra request just for them). */
  #nodes = new Map<string, string[]>();
  #columns: Column[] = [];
  #service!: HTMLInputElement;
  #compare!: HTMLInputElement;
  #runner!: HTMLParagraphElement;
  #status = el('p', { class: 'dp-status', role: 'status', 'aria-live': 'polite' });
  #grid = el('div', { class: 'dp-columns' });

  get modes(): string[] {
    return (this.getAttribute('modes') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  }

  #modeTitle(mode: string): string {
    try {
      return (JSON.parse(this.dataset.modeTitles ?? '{}') as Record<string, string>)[mode] ?? mode;
    } catch {
      return mode;
    }
  }

  connectedCallback(): void {
    if (this.#columns.length) return;
    const form = el('form', { class: 'dp-controls' });
    this.#service = el('input', {
      type: 'text',
      name: 'service',
      value: this.getAttribute('service') || DEFAULT_SERVICE,
      list: `${this.#uid()}-services`,
      spellcheck: 'false',
      autocomplete: 'off',
      required: '',
      'aria-describedby': `${this.#uid()}-service-help`,
    });
    this.#compare = el('input', { type: 'checkbox' });
    this.#compare.checked = this.hasAttribute('compare');
    form.append(
      el('label', { class: 'dp-field' }, 'Service (namespace/name) ', this.#service),
      el('datalist', { id: `${this.#uid()}-services` }),
      el('button', { type: 'submit', class: 'dp-button primary' }, 'Show the dataplane'),
      el('label', { class: 'dp-check' }, this.#compare, ' Side by side'),
      el(
        'small',
        { id: `${this.#uid()}-service-help`, class: 'dp-muted dp-help' },
        'Pick a source per column: a running lab cluster (live), or a bundled fixture that needs no Docker.',
      ),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.showAll();
    });
    this.#compare.addEventListener('change', () => {
      this.#layout();
      if (this.#compare.checked && this.#columns[0].root.dataset.state === 'ok') void this.#show(this.#columns[1]);
    });
    this.#runner = el('p', { class: 'dp-runner', hidden: '' });
    const sources = (this.getAttribute('sources') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const follow = this.hasAttribute('follow-page-mode') && this.modes.includes(pageMode());
    if (follow) sources[0] = `live:${pageMode()}`;
    this.#columns = [0, 1].map((i) => this.#column(i, sources[i] ?? sources[0] ?? ''));
    if (this.hasAttribute('follow-page-mode')) onPageModeChange(({ mode }) => this.#follow(mode));
    this.#grid.append(...this.#columns.map((c) => c.root));
    this.replaceChildren(form, this.#runner, this.#status, this.#grid);
    this.#layout();
    this.setAttribute('data-ready', '');
    void this.#init();
  }

  /** The page switched clusters: the first column reads that one from now on. */
  #follow(mode: string): void {
    const col = this.#columns[0];
    if (!col || !this.modes.includes(mode)) return;
    col.controller?.abort();
    col.source.dataset.initial = `live:${mode}`;
    col.source.value = `live:${mode}`;
    this.#fillNodes(col);
    col.root.dataset.state = 'idle';
    col.result.replaceChildren(el('p', { class: 'dp-muted' }, `Press “Show the dataplane” to read the ${mode} cluster.`));
  }

  disconnectedCallback(): void {
    for (const c of this.#columns) c.controller?.abort();
  }

  #uid(): string {
    if (!this.id) this.id = `dplab-dataplane-${Math.random().toString(36).slice(2, 8)}`;
    return this.id;
  }

  #column(i: number, initial: string): Column {
    const source = el('select', { class: 'dp-source' });
    const node = el('select', { class: 'dp-node' });
    const refresh = el('button', { type: 'button', class: 'dp-button' }, 'Refresh');
    const root = el(
      'section',
      { class: 'dp-column', 'aria-label': `Dataplane view ${i + 1}`, 'data-state': 'idle' },
      el(
        'div',
        { class: 'dp-column-controls' },
        el('label', { class: 'dp-field' }, 'Source ', source),
        el('label', { class: 'dp-field' }, 'Node ', node),
        refresh,
      ),
    );
    const note = el('p', { class: 'dp-muted dp-note' });
    const result = el('div', { class: 'dp-result' }, el('p', { class: 'dp-muted' }, 'Press “Show the dataplane”.'));
    root.append(note, result);
    const col: Column = { root, source, node, note, result };
    source.dataset.initial = initial;
    source.addEventListener('change', () => this.#fillNodes(col));
    refresh.addEventListener('click', () => void this.#show(col));
    return col;
  }

  #layout(): void {
    const two = this.#compare.checked;
    this.#grid.dataset.count = two ? '2' : '1';
    this.#columns[1].root.hidden = !two;
  }

  async #init(): Promise<void> {
    try {
      const [fixtures, clusters] = await Promise.all([
        api('/api/dataplane/fixtures', fixtureListSchema),
        this.modes.length
          ? api('/api/clusters', clusterListSchema).catch((err) => {
              if (err instanceof RunnerUnavailable) throw err;
              return { clusters: [] };
            })
          : Promise.resolve({ clusters: [] }),
      ]);
      this.#fixtures = fixtures.fixtures;
      this.#clusters = new Map(clusters.clusters.map((c) => [c.mode, c]));
      this.#runner.hidden = true;
    } catch (err) {
      this.#offline(err);
    }
    this.#fillSources();
    if (this.hasAttribute('autoshow') && this.#runner.hidden) void this.showAll();
  }

  #offline(err: unknown): void {
    const text = err instanceof RunnerUnavailable ? err.message : `The runner answered with an error: ${(err as Error).message}`;
    const head = err instanceof RunnerUnavailable && err.reason === 'unauthorised' ? 'Not signed in. ' : 'Runner not reachable. ';
    this.#runner.replaceChildren(el('strong', {}, head), text);
    this.#runner.hidden = false;
  }

  #fillSources(): void {
    const services = new Set([this.#service.value, ...this.#fixtures.flatMap((f) => f.services)]);
    this.querySelector('datalist')?.replaceChildren(...[...services].map((s) => el('option', { value: s })));
    for (const col of this.#columns) {
      const keep = col.source.value || col.source.dataset.initial || '';
      const live = el(
        'optgroup',
        { label: 'Running cluster (live)' },
        ...this.modes.map((m) => {
          const state = this.#clusters.get(m)?.state;
          return el('option', { value: `live:${m}` }, `${this.#modeTitle(m)}${state ? ` (${STATE_NOTE[state]})` : ''}`);
        }),
      );
      const fixtures = el(
        'optgroup',
        { label: 'Bundled fixture (no Docker needed)' },
        ...this.#fixtures.map((f) => el('option', { value: `fixture:${f.id}`, title: f.description }, `${f.format} · ${f.name}`)),
      );
      col.source.replaceChildren(...(this.modes.length ? [live] : []), ...(this.#fixtures.length ? [fixtures] : []));
      if ([...col.source.options].some((o) => o.value === keep)) col.source.value = keep;
      this.#fillNodes(col);
    }
  }

  #fillNodes(col: Column): void {
    const [kind, id] = splitSource(col.source.value);
    const fixture = kind === 'fixture' ? this.#fixtures.find((f) => f.id === id) : undefined;
    col.note.textContent = fixture
      ? fixture.description
      : kind === 'live'
        ? `Reads the rules on a node of the dplab-${id} cluster when you press Show or Refresh.`
        : '';
    if (fixture) {
      col.node.replaceChildren(el('option', { value: fixture.node }, `${fixture.node} (where it was printed)`));
      col.node.disabled = true;
      return;
    }
    const keep = col.node.value;
    const nodes = this.#nodes.get(id) ?? [];
    col.node.replaceChildren(el('option', { value: FIRST_WORKER }, 'first worker'), ...nodes.map((n) => el('option', { value: n }, n)));
    col.node.disabled = kind !== 'live';
    if (nodes.includes(keep)) col.node.value = keep;
  }

  /** Show every visible column (the form's button). */
  async showAll(): Promise<void> {
    if (!isServiceRef(this.#service.value.trim())) {
      this.#status.textContent = 'Give the Service as namespace/name, for example default/web.';
      this.#service.focus();
      return;
    }
    if (!this.#fixtures.length && !this.#runner.hidden) await this.#init();
    await Promise.all(this.#columns.filter((c) => !c.root.hidden).map((c) => this.#show(c)));
  }

  async #show(col: Column): Promise<void> {
    const [kind, id] = splitSource(col.source.value);
    if (!kind) return;
    col.controller?.abort();
    const controller = (col.controller = new AbortController());
    const service = this.#service.value.trim();
    col.root.dataset.state = 'loading';
    col.root.setAttribute('aria-busy', 'true');
    col.result.replaceChildren(
      el('p', { class: 'dp-muted' }, kind === 'live' ? `Reading the rules on the ${id} cluster…` : 'Parsing the fixture…'),
    );
    try {
      const r = await api(requestPath(kind, id, service, col.node.value), explainResponseSchema, { signal: controller.signal });
      if (controller.signal.aborted) return;
      if (kind === 'live' && r.nodes) {
        this.#nodes.set(id, r.nodes);
        this.#fillNodes(col);
      }
      col.root.dataset.state = 'ok';
      this.#status.textContent = `Showing ${summaryOf(r)}.`;
      const mode = kind === 'live' && isMode(id) ? id : null;
      await renderResult(col.result, r, (diagram) => traceSection({ mode, shown: r, diagram, level: headingLevelAt(col.result) }));
    } catch (err) {
      if (controller.signal.aborted || (err as Error).name === 'AbortError') return;
      col.root.dataset.state = 'error';
      const e = err as ShownError;
      if (err instanceof RunnerUnavailable) this.#offline(err);
      // No cluster can start here at all: name that (Docker, kind) rather than a Start that cannot work.
      const shown =
        kind === 'live' ? await blockerError(id, e, 'Meanwhile, pick a bundled fixture as the source: it needs no Docker.') : null;
      if (controller.signal.aborted) return;
      if (shown) {
        renderError(col.result, shown);
        this.#status.textContent = `Could not show ${service}: ${shown.message}`;
        return;
      }
      const extra =
        kind === 'live' && (e.status === 409 || e.status === 503)
          ? document.querySelector('dplab-cluster-panel')
            ? 'Press Start in the bar at the top of this page, or pick a bundled fixture as the source.'
            : 'Start it on a lab page or on the Clusters page (/clusters/), or pick a bundled fixture as the source.'
          : undefined;
      renderError(col.result, { message: e.message, fix: e.fix, details: e.details }, extra);
      this.#status.textContent = `Could not show ${service}: ${e.message}`;
    } finally {
      if (col.controller === controller) col.root.removeAttribute('aria-busy');
    }
  }
}

function splitSource(value: string): ['live' | 'fixture' | '', string] {
  const [kind, id = ''] = value.split(/:(.*)/s);
  return kind === 'live' || kind === 'fixture' ? [kind, id] : ['', ''];
}

function requestPath(kind: 'live' | 'fixture', id: string, service: string, node: string): string {
  const q = new URLSearchParams({ service });
  if (kind === 'fixture') {
    const [format, name] = id.split('/');
    return `/api/dataplane/fixture?${new URLSearchParams({ format, name, service })}`;
  }
  if (node) q.set('node', node);
  return `/api/dataplane/${encodeURIComponent(id)}?${q}`;
}

if (!customElements.get('dplab-dataplane')) customElements.define('dplab-dataplane', DataplanePanel);
