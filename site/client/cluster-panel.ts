/**
 * <dplab-cluster-panel mode="iptables">: the state of one lab cluster, live progress while it
 * starts (from the runner's Server-Sent Events stream, not polling), the error with its fix,
 * and Start / Retry / Delete. Without a runner it says so and how to start one.
 *
 * In a workspace's top bar the progress is one line: a "Step 2 of 6" button (aria-expanded)
 * that shows every step, and the current step with its state; the others are folded until the
 * button opens them. The error and its fix are never folded: they are outside the list.
 */
import type { z } from '../../scripts/wire/zod.ts';
import {
  clusterEventSchema,
  clusterListSchema,
  clusterStartSchema,
  clusterStatusSchema,
  type ActionProgress,
  type ClusterEvent,
  type ClusterStatus,
  type Progress,
} from '../../scripts/wire/clusters.ts';
import type { ErrorJson } from '../../scripts/wire/errors.ts';
import { nodeCountText } from '../../scripts/wire/node-count.ts';
import { api, RunnerUnavailable } from './runner-api.ts';
import { announceClusterState } from './cluster-state-event.ts';
import { setBlocker } from './cluster-blocker.ts';
import { richText } from './rich-text.ts';
import { el } from './dom.ts';
import { openRunnerEvents } from './runner-events.ts';

const EVENTS_URL = '/api/clusters/events';
/** Elapsed-time labels tick once a second, only while an action runs. */
const TICK_MS = 1_000;

const STATE_LABEL: Record<ClusterStatus['state'], string> = {
  absent: 'Not running',
  provisioning: 'Starting…',
  ready: 'Ready',
  broken: 'Not healthy',
};

const ICON: Record<ActionProgress['state'], string> = { pending: '○', running: '', done: '✓', failed: '✗', skipped: '–' };

function elapsed(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

export class ClusterPanel extends HTMLElement {
  #status?: ClusterStatus;
  #offline?: string;
  /** Why the runner cannot be used: not there at all, or there but this page has no token. */
  #offlineReason: 'offline' | 'unauthorised' = 'offline';
  #busy = false;
  #source?: { close(): void };
  #tick?: number;
  #body!: HTMLDivElement;
  /** Kept across renders so screen readers hear changes, not a new region each time. */
  #live = el('div', { class: 'dplab-cp-progress', 'aria-live': 'polite', role: 'status' });
  /** In a workspace's bar: the progress folds to the current step; this button shows them all. */
  #compact = false;
  #stepsOpen = false;
  #toggle = el('button', { type: 'button', class: 'dplab-cp-steps-toggle', 'aria-expanded': 'false', 'data-focus-key': 'steps' });

  get mode(): string {
    return this.getAttribute('mode') ?? '';
  }

  connectedCallback(): void {
    // Replace the server-rendered fallback with the live view.
    this.#body = el('div', { class: 'dplab-cp-body' });
    this.replaceChildren(this.#body);
    this.setAttribute('data-ready', '');
    this.#compact = !!this.closest('.dplab-ws-bar');
    const listId = `dplab-cp-steps-${this.mode || 'cluster'}`;
    this.#toggle.setAttribute('aria-controls', listId);
    this.#toggle.addEventListener('click', () => {
      this.#stepsOpen = !this.#stepsOpen;
      this.#render();
    });
    void this.#load();
  }

  disconnectedCallback(): void {
    this.#source?.close();
    this.#source = undefined;
    if (this.#tick) clearInterval(this.#tick);
  }

  async #load(): Promise<void> {
    try {
      this.#status = await api(`/api/clusters/${encodeURIComponent(this.mode)}`, clusterStatusSchema);
      this.#offline = undefined;
      this.#listen();
    } catch (err) {
      this.#offline = err instanceof RunnerUnavailable ? err.message : `The runner answered with an error: ${(err as Error).message}`;
      this.#offlineReason = err instanceof RunnerUnavailable ? err.reason : 'offline';
    }
    this.#render();
  }

  #listen(): void {
    if (this.#source) return;
    // Each event's data is validated against its wire schema before the view sees it.
    const handlers: Record<string, (data: unknown) => void> = {};
    const on = <S extends z.ZodMiniType>(type: string, schema: S, fn: (data: z.output<S>) => void) => {
      handlers[type] = (raw) => fn(schema.parse(raw));
    };
    on('snapshot', clusterListSchema, (d) => {
      const mine = d.clusters.find((c) => c.mode === this.mode);
      if (mine) this.#update(mine);
    });
    on('status', clusterEventSchema, (e) => e.type === 'status' && e.mode === this.mode && this.#update(e.status));
    on('action', clusterEventSchema, (e) => e.type === 'action' && e.mode === this.mode && this.#applyAction(e));
    on('info', clusterEventSchema, (e) => {
      if (e.type !== 'info' || e.mode !== this.mode || !this.#status?.progress) return;
      this.#status.progress.notes.push(e.message);
      this.#render();
    });
    this.#source = openRunnerEvents(EVENTS_URL, {
      onEvent: (type, data) => {
        try {
          handlers[type]?.(JSON.parse(data));
        } catch {
          // A malformed frame is ignored; the next status event repairs the view.
        }
      },
      // The stream reconnects by itself; when it gives up (runner stopped), say so. It goes on
      // looking, so the next status event (the runner back) clears this.
      onGiveUp: (reason) => {
        this.#offline = new RunnerUnavailable(reason).message;
        this.#offlineReason = reason;
        this.#render();
      },
    });
  }

  #update(status: ClusterStatus): void {
    this.#status = status;
    this.#offline = undefined;
    this.#render();
  }

  #applyAction(e: Extract<ClusterEvent, { type: 'action' }>): void {
    const s = this.#status;
    if (!s) return;
    const progress: Progress = s.progress?.runId === e.runId ? s.progress : { runId: e.runId, startedAt: e.at, actions: [], notes: [] };
    let a = progress.actions.find((x) => x.id === e.id);
    if (!a) progress.actions.push((a = { id: e.id, title: e.title, state: 'pending' }));
    if (e.phase === 'start') Object.assign(a, { state: 'running', startedAt: e.at });
    else Object.assign(a, { state: e.phase === 'end' ? 'done' : e.phase === 'fail' ? 'failed' : 'skipped', endedAt: e.at });
    this.#status = { ...s, state: 'provisioning', progress, error: e.error ?? (e.phase === 'start' ? undefined : s.error) };
    this.#render();
  }

  async #act(method: 'POST' | 'DELETE'): Promise<void> {
    this.#busy = true;
    const before = this.#status;
    // Starting, from the click on: set before the request, so that the run's own events, which can
    // reach the page before the answer does (a start that fails at once, a busy machine), win.
    const starting = method === 'POST' && before ? { ...before, state: 'provisioning' as const, error: undefined } : undefined;
    if (starting) this.#status = starting;
    this.#render();
    try {
      if (method === 'POST') {
        await api(`/api/clusters/${encodeURIComponent(this.mode)}/up`, clusterStartSchema, { method: 'POST', body: {} });
      } else {
        this.#status = await api(`/api/clusters/${encodeURIComponent(this.mode)}`, clusterStatusSchema, { method: 'DELETE' });
      }
    } catch (err) {
      // Nothing started (no event came since): the state the panel had, with what went wrong.
      if (starting && this.#status === starting) this.#status = before;
      if (err instanceof RunnerUnavailable) this.#offline = err.message;
      else if (this.#status)
        this.#status = {
          ...this.#status,
          error: { message: (err as Error).message, fix: (err as ErrorJson).fix, details: (err as ErrorJson).details },
        };
    } finally {
      this.#busy = false;
      this.#render();
    }
  }

  #tickTimes(): void {
    const now = Date.now();
    for (const a of this.#status?.progress?.actions ?? []) {
      if (a.state !== 'running' || !a.startedAt) continue;
      const cell = this.#live.querySelector(`li[data-id="${CSS.escape(a.id)}"] .dplab-cp-time`);
      if (cell) cell.textContent = elapsed(now - a.startedAt);
    }
  }

  #render(): void {
    const body = this.#body;
    if (!body) return;
    // Drawing again replaces the buttons: the one that had the keyboard focus gets it back.
    const focused = document.activeElement instanceof HTMLElement && this.contains(document.activeElement) ? document.activeElement : null;
    const focusKey = focused?.dataset.focusKey;
    this.#draw(body);
    if (focusKey && document.activeElement !== focused)
      this.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focusKey)}"]`)?.focus({ preventScroll: true });
  }

  #draw(body: HTMLDivElement): void {
    const title = this.dataset.title ?? this.mode;
    const s = this.#status;
    const state = this.#offline ? 'offline' : (s?.state ?? 'loading');
    this.dataset.state = state;
    announceClusterState(this.mode, state);
    // Whether no cluster of this mode can start here: the lab page then offers its replay (lab/replay-view.ts).
    if (s && !this.#offline) setBlocker(this.mode, s.blocked && s.error ? s.error : null);

    const head = el(
      'div',
      { class: 'dplab-cp-head' },
      el('strong', {}, title),
      el(
        'span',
        { class: 'dplab-cp-badge', 'data-state': state },
        this.#offline
          ? this.#offlineReason === 'unauthorised'
            ? 'Not signed in'
            : 'Runner not reachable'
          : s
            ? STATE_LABEL[s.state]
            : 'Checking…',
      ),
    );
    const parts: Node[] = [head];

    if (this.#offline) {
      parts.push(el('p', { class: 'dplab-cp-offline' }, richText(this.#offline)));
      const retry = el('button', { type: 'button', class: 'dplab-cp-button' }, 'Check again');
      retry.addEventListener('click', () => void this.#load());
      parts.push(el('div', { class: 'dplab-cp-actions' }, retry));
      body.replaceChildren(...parts);
      return;
    }
    if (!s) {
      body.replaceChildren(...parts);
      return;
    }
    if (s.state === 'ready') {
      const meta = `${nodeCountText(s)}${s.startedAhead ? ' · started ahead' : ''} · dataplane: ${s.proxyMode} · cluster ${s.name}`;
      // The one-row bar may end it in "…": all of it on hover.
      parts.push(el('p', { class: 'dplab-cp-meta', title: meta }, meta));
    }

    const live = this.#live;
    live.replaceChildren();
    this.toggleAttribute('data-steps-open', false);
    let toggle: HTMLButtonElement | undefined;
    if (s.progress && (s.state === 'provisioning' || s.error)) {
      const list = el('ol', { class: 'dplab-cp-actions-list', id: this.#toggle.getAttribute('aria-controls')! });
      const now = Date.now();
      const actions = s.progress.actions;
      // The step a folded list shows: the failed one, else the running one (the last started, when
      // one runs beside the waits), else the next to run, else the last.
      const current =
        [
          actions.findIndex((a) => a.state === 'failed'),
          actions.findLastIndex((a) => a.state === 'running'),
          actions.findIndex((a) => a.state === 'pending'),
          actions.length - 1,
        ].find((i) => i >= 0) ?? 0;
      for (const [i, a] of actions.entries()) {
        const icon =
          a.state === 'running'
            ? el('span', { class: 'dplab-cp-spinner', 'aria-hidden': 'true' })
            : el('span', { class: 'dplab-cp-icon', 'aria-hidden': 'true' }, ICON[a.state]);
        const time = a.startedAt ? elapsed((a.endedAt ?? now) - a.startedAt) : '';
        const state = a.state === 'running' ? ' (running)' : a.state === 'failed' ? ' (failed)' : a.state === 'done' ? ' (done)' : '';
        list.append(
          el(
            'li',
            { 'data-state': a.state, 'data-id': a.id, ...(i === current ? { 'data-current': '' } : {}) },
            icon,
            // Title and state apart: where a narrow bar shortens the title, the state stays whole.
            el(
              'span',
              { class: 'dplab-cp-label', title: `${a.title}${state}` },
              el('span', { class: 'dplab-cp-title' }, a.title),
              ...(state ? [el('span', { class: 'dplab-cp-state' }, state)] : []),
            ),
            el('span', { class: 'dplab-cp-time', 'aria-hidden': 'true' }, time),
          ),
        );
      }
      live.append(list);
      if (s.startedAhead && s.state === 'provisioning')
        live.append(el('p', { class: 'dplab-cp-note' }, 'Started ahead by the runner, for a later lab, while you worked on another.'));
      for (const n of s.progress.notes) live.append(el('p', { class: 'dplab-cp-note' }, n));
      if (this.#compact && actions.length > 1) {
        toggle = this.#toggle;
        const open = this.#stepsOpen;
        toggle.setAttribute('aria-expanded', String(open));
        toggle.title = open ? 'Fold the steps to the current one' : 'Show every step';
        toggle.replaceChildren(
          `Step ${current + 1} of ${actions.length}`,
          el('span', { class: 'dplab-cp-chevron', 'aria-hidden': 'true' }, open ? '▴' : '▾'),
        );
        this.toggleAttribute('data-steps-open', open);
      }
    }
    // The button before the step it counts, so Tab reaches it right after the mode picker.
    if (toggle) parts.push(toggle);
    parts.push(live);

    if (s.error) {
      // Panels whose errors share a fix show one problem (errors-once.ts): each names its own mode.
      const box = el(
        'div',
        { class: 'dplab-cp-error', role: 'alert', 'data-problem': s.error.fix ?? s.error.message },
        el('p', {}, el('strong', {}, 'Error: '), richText(s.error.message)),
      );
      if (s.error.fix) box.append(el('p', {}, el('strong', {}, 'Fix: '), richText(s.error.fix)));
      if (s.error.details) box.append(el('details', {}, el('summary', {}, 'Details'), el('pre', {}, s.error.details)));
      parts.push(box);
    }

    const buttons = el('div', { class: 'dplab-cp-actions' });
    const button = (label: string, method: 'POST' | 'DELETE', kind = '') => {
      const b = el('button', { type: 'button', class: `dplab-cp-button ${kind}`.trim(), 'data-focus-key': label }, label);
      b.disabled = this.#busy;
      b.addEventListener('click', () => void this.#act(method));
      buttons.append(b);
    };
    // Always "Start": messages on the page and in the terminal name this button.
    if (s.state === 'absent' || s.state === 'broken') button('Start', 'POST', 'primary');
    if (s.state !== 'absent') button('Delete', 'DELETE');
    parts.push(buttons);
    body.replaceChildren(...parts);

    const running = s.progress?.actions.some((a) => a.state === 'running');
    // Only the clock text changes each second: buttons keep keyboard focus.
    if (running && !this.#tick) this.#tick = window.setInterval(() => this.#tickTimes(), TICK_MS);
    if (!running && this.#tick) {
      clearInterval(this.#tick);
      this.#tick = undefined;
    }
  }
}

if (!customElements.get('dplab-cluster-panel')) customElements.define('dplab-cluster-panel', ClusterPanel);
