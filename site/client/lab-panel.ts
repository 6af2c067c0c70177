/**
 * <dplab-lab lab="first-service">: the live lab panel. Checks, solutions and resets go to the
 * runner's lab API with ids only; progress lives in localStorage and in the runner's state.
 * Every button stays usable without the runner and says how to start it.
 */
import { api, RunnerUnavailable } from './runner-api.ts';
import { loadLocal, loadRemote, merge, saveLocal, saveRemote, type LabProgress } from './lab/progress-store.ts';
import { checkResultSchema } from '../../scripts/wire/checks.ts';
import { isMode } from '../../scripts/wire/modes.ts';
import { acceptedSchema } from '../../scripts/wire/session.ts';
import { setupResultSchema } from '../../scripts/wire/setup.ts';
import { clearResult, showNote, showResult } from './lab/result-view.ts';
import { keysFor } from './lab/placeholder.ts';
import type { ScaleChart } from './lab/scale-chart.ts';
import { onPageModeChange, pageMode, setPageMode } from './page-mode.ts';
import { lastClusterState, onClusterState } from './cluster-state-event.ts';
import { richText } from './rich-text.ts';
import { blockedAction } from './cluster-blocker.ts';
import { ReplayView } from './lab/replay-view.ts';

/** What a failed action's message is headed with, so a refused solve never reads "Could not check." */
const FAILED: Record<string, string> = {
  check: 'Could not check:',
  solve: 'Could not apply the solution:',
  'reset-step': 'Could not reset to this step:',
  'reset-lab': 'Could not reset the lab:',
};

const ICON: Record<string, string> = { todo: '○', pass: '✓', fail: '✗', error: '!' };
const STATUS_TEXT: Record<string, string> = { todo: 'not done', pass: 'done', fail: 'not done yet', error: 'could not be checked' };

class LabElement extends HTMLElement {
  private labId = '';
  private modes: string[] = [];
  private hintCounts: Record<string, number> = {};
  private progress: LabProgress = { passed: {}, hints: {} };
  /** Last check outcome per step in this page view (pass/fail/error), for icons. */
  private lastStatus = new Map<string, string>();
  /** The last passing check's message per step in this page view, for the end-of-lab summary. */
  private passMessages = new Map<string, string>();
  /** The measurements chart, on pages that have one (scale-compare): its code loads only there. */
  private chart?: Promise<ScaleChart | undefined>;
  /** Where no cluster can start here: the note with the fix, and each step's replay of its recordings. */
  private replay!: ReplayView;

  connectedCallback(): void {
    this.labId = this.getAttribute('lab') ?? '';
    this.modes = (this.dataset.modes ?? '').split(' ').filter(Boolean);
    this.hintCounts = JSON.parse(this.dataset.hints ?? '{}');
    this.progress = loadLocal(this.labId);
    this.replay = new ReplayView(this, this.labId, () => this.mode);
    this.replay.connect();
    const chartRoot = this.querySelector<HTMLElement>('[data-scale-chart]');
    if (chartRoot) this.chart = import('./lab/scale-chart.ts').then((m) => m.mountScaleChart(chartRoot, this.labId));
    this.addEventListener('click', (ev) => this.onClick(ev));
    // The presenter moved the cluster to a step (presenter.ts): the runner's progress is the truth now.
    this.addEventListener('dplab:lab-moved', (ev) => {
      const { step, reset } = (ev as CustomEvent<{ step: string; reset: boolean }>).detail;
      if (reset) this.clearFrom(step);
      void loadRemote(this.labId).then((remote) => {
        this.progress = merge(this.progress, remote);
        saveLocal(this.labId, this.progress);
        this.render();
      });
    });
    this.querySelector<HTMLSelectElement>('select[data-action="mode"]')?.addEventListener('change', (ev) =>
      setPageMode((ev.target as HTMLSelectElement).value),
    );
    onPageModeChange(({ mode }) => this.modeChanged(mode));
    // Setup by itself: at once (the workspace files), and whenever this mode's cluster becomes ready.
    onClusterState(({ mode, state }) => {
      if (mode === this.mode && state === 'ready') void this.setup();
    });
    this.render();
    void this.setup();
    void loadRemote(this.labId).then((remote) => {
      const hadMode = this.progress.mode;
      this.progress = merge(this.progress, remote);
      saveLocal(this.labId, this.progress);
      // The runner remembers the mode of a learner who cleared the browser's storage.
      if (!hadMode && this.progress.mode && this.progress.mode !== this.mode) setPageMode(this.progress.mode);
      this.render();
    });
  }

  /** The page's one mode (site/client/page-mode.ts): the terminal uses the same. */
  get mode(): string {
    return pageMode() || this.modes[0];
  }

  private setupRun = 0;

  /** Ask the runner to set the lab up on this mode's cluster (idempotent) and show it as a progress step. */
  private async setup(): Promise<void> {
    const mode = this.mode;
    const run = ++this.setupRun;
    const box = this.querySelector<HTMLElement>('.dplab-setup');
    const show = (state: string, icon: string, text: string, fix?: string) => {
      if (!box || run !== this.setupRun) return;
      box.dataset.state = state;
      box.querySelector('.dplab-setup-icon')!.textContent = icon;
      const t = box.querySelector<HTMLElement>('.dplab-setup-text')!;
      t.replaceChildren(richText(text));
      if (fix) t.append(' ', richText(fix));
      // Where the one-row bar shortens it, the whole line on hover.
      box.title = t.textContent ?? '';
    };
    show('running', '…', lastClusterState(mode) === 'ready' ? `Lab setup: applying on ${mode}…` : 'Lab setup: writing your files…');
    try {
      const r = await api(`/api/labs/${enc(this.labId)}/setup`, setupResultSchema, { method: 'POST', body: { mode } });
      if (r.cluster === 'no-cluster')
        show('waiting', '○', `Lab setup: files ready; namespace \`${r.namespace}\` follows when the ${mode} cluster is ready`);
      else show('done', '✓', `Lab set up on ${mode}: namespace \`${r.namespace}\`${r.files ? `, ${r.files} files` : ''}`);
    } catch (err) {
      if (err instanceof RunnerUnavailable) show('failed', '!', `Lab setup: ${err.message}`);
      else show('failed', '!', `Could not set the lab up: ${(err as Error).message}`, (err as { fix?: string }).fix);
    }
  }

  private persist(): void {
    saveLocal(this.labId, this.progress);
    void saveRemote(this.labId, this.progress);
  }

  /** The page switched clusters (terminals reconnect by themselves): results of the old one no longer apply. */
  private modeChanged(mode: string): void {
    if (!this.modes.includes(mode) || !isMode(mode)) return;
    this.progress.mode = mode;
    this.lastStatus.clear();
    this.querySelectorAll<HTMLElement>('.dplab-result').forEach(clearResult);
    this.persist();
    this.render();
    void this.setup();
  }

  private render(): void {
    const mode = this.mode;
    const select = this.querySelector<HTMLSelectElement>('select[data-action="mode"]');
    if (select) select.value = mode;
    this.querySelectorAll<HTMLElement>('.dplab-cluster').forEach((c) => (c.hidden = c.dataset.mode !== mode));
    this.querySelectorAll<HTMLElement>('[data-modes]').forEach((el) => {
      if (el === this) return;
      el.hidden = !(el.dataset.modes ?? '').split(' ').includes(mode) && !!el.dataset.modes;
    });
    const passed = new Set(this.progress.passed[mode] ?? []);
    const steps = [...this.querySelectorAll<HTMLElement>('.dplab-step')];
    for (const el of steps) {
      const id = el.dataset.step!;
      const status = passed.has(id) ? 'pass' : (this.lastStatus.get(id) ?? 'todo');
      el.dataset.status = status;
      el.querySelector('.dplab-step-icon')!.textContent = ICON[status];
      el.querySelector('.dplab-step-status')!.textContent = STATUS_TEXT[status];
      this.renderHints(el, id);
    }
    const done = steps.filter((s) => passed.has(s.dataset.step!)).length;
    const bar = this.querySelector('progress');
    if (bar) bar.value = done;
    const text = this.querySelector('.dplab-progress-text');
    // "done on <mode>" apart: the one-row bar shows "1 of 4 steps" beside the progress bar (screen readers hear it all).
    if (text) {
      const more = document.createElement('span');
      more.className = 'dplab-progress-more';
      more.textContent = ` done on ${mode}`;
      text.replaceChildren(`${done} of ${steps.length} steps`, more);
    }
    this.renderSummary(done === steps.length);
  }

  /** Every step passed on this mode: what the learner did and what the checks saw, before "Where next". */
  private renderSummary(complete: boolean): void {
    const box = this.querySelector<HTMLElement>('.dplab-lab-summary');
    if (!box) return;
    box.hidden = !complete;
    if (!complete) return;
    box.querySelectorAll<HTMLElement>('[data-summary-step]').forEach((li) => {
      const seen = this.passMessages.get(li.dataset.summaryStep!);
      li.querySelector('.dplab-lab-summary-seen')!.replaceChildren(seen ? richText(seen) : `passed on ${this.mode} (checked earlier).`);
    });
  }

  private renderHints(el: HTMLElement, id: string): void {
    const total = this.hintCounts[id] ?? 0;
    const shown = Math.min(this.progress.hints[id] ?? 0, total);
    el.querySelectorAll<HTMLElement>('.dplab-hint-list li').forEach((li, i) => (li.hidden = i >= shown));
    const button = el.querySelector<HTMLButtonElement>('[data-action="hint"]');
    if (!button) return;
    button.hidden = shown >= total;
    button.textContent = `Show a hint (${shown + 1} of ${total})`;
  }

  private onClick(ev: Event): void {
    const button = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-action]');
    if (!button || !this.contains(button)) return;
    const stepEl = button.closest<HTMLElement>('.dplab-step');
    const step = stepEl?.dataset.step;
    if (this.blocked(stepEl, button.dataset.action ?? '')) return;
    switch (button.dataset.action) {
      case 'run':
        // A placeholder (`<mode>`) is typed for the learner to replace, never run (lab/placeholder.ts).
        // While the command before has not brought the prompt back, this one waits, marked (run-queue.ts).
        document.dispatchEvent(
          new CustomEvent('dplab:type', {
            detail: {
              ...keysFor(button.dataset.command ?? ''),
              onState: (state: string) => {
                button.toggleAttribute('data-queued', state === 'queued');
                if (state === 'full') flash(button, 'Queue full');
              },
            },
          }),
        );
        return;
      case 'copy':
        void navigator.clipboard?.writeText(button.dataset.command ?? '').then(
          () => flash(button, 'Copied'),
          () => flash(button, 'Copy failed'),
        );
        return;
      case 'hint':
        if (!step) return;
        this.progress.hints[step] = Math.min((this.progress.hints[step] ?? 0) + 1, this.hintCounts[step] ?? 0);
        this.persist();
        this.render();
        stepEl!
          .querySelectorAll<HTMLElement>('.dplab-hint-list li:not([hidden])')
          .item((this.progress.hints[step] ?? 1) - 1)
          ?.setAttribute('tabindex', '-1');
        return;
      case 'check':
        if (stepEl && step) void this.check(stepEl, step, button);
        return;
      case 'solve':
        if (stepEl && step)
          void this.act(stepEl, button, `/api/labs/${enc(this.labId)}/steps/${enc(step)}/solve`, 'Applying the solution…', () =>
            this.check(stepEl, step, stepEl.querySelector('[data-action="check"]')!),
          );
        return;
      case 'reset-step':
        if (stepEl && step)
          void this.act(
            stepEl,
            button,
            `/api/labs/${enc(this.labId)}/steps/${enc(step)}/reset`,
            'Resetting the lab and applying the earlier steps…',
            async () => this.clearFrom(step),
          );
        return;
      case 'reset-lab':
        this.confirmReset(button);
        return;
    }
  }

  /**
   * Reset lab asks first (a dialog: Escape or "Keep my work" leaves everything as it was); the
   * answer shows at the top of the instructions, scrolled into view, since the button is in the bar.
   */
  private confirmReset(button: HTMLButtonElement): void {
    const dialog = this.querySelector<HTMLDialogElement>('.dplab-reset-dialog');
    const go = () => {
      const notice = this.querySelector<HTMLElement>('.dplab-runner-notice');
      const done = this.act(this, button, `/api/labs/${enc(this.labId)}/reset`, 'Resetting the lab…', async () => {
        this.clearFrom(undefined);
        if (notice) {
          notice.hidden = false;
          showNote(notice, 'pass', `The lab is reset on ${this.mode}: its files are new and every step is to do again.`);
        }
      });
      notice?.scrollIntoView({ block: 'nearest' });
      void done.then(() => notice?.scrollIntoView({ block: 'nearest' }));
    };
    if (!dialog) return go();
    dialog.returnValue = '';
    dialog.addEventListener('close', () => (dialog.returnValue === 'reset' ? go() : button.focus()), { once: true });
    dialog.showModal();
  }

  /** Check, solve and reset cannot work without a cluster: when none can start here, say why and what to do instead. */
  private blocked(stepEl: HTMLElement | null, action: string): boolean {
    const blocker = this.replay.blocker();
    if (!blocker || !(action in FAILED)) return false;
    if (stepEl) {
      const region = stepEl.querySelector<HTMLElement>('.dplab-result')!;
      const { message, fix } = blockedAction(blocker, '“Replay the recording” shows this step on a real cluster instead.');
      showNote(region, 'error', message, fix, FAILED[action]);
    } else {
      const { message, fix } = blockedAction(blocker, 'Until then, each step offers a replay of its recording.');
      this.showRunnerNotice(`${FAILED[action]} ${message} ${fix ?? ''}`.trim(), 'blocked');
    }
    return true;
  }

  private clearFrom(step: string | undefined): void {
    const ids = [...this.querySelectorAll<HTMLElement>('.dplab-step')].map((s) => s.dataset.step!);
    const keep = step ? ids.slice(0, ids.indexOf(step)) : [];
    this.progress.passed[this.mode] = (this.progress.passed[this.mode] ?? []).filter((s) => keep.includes(s));
    for (const id of ids) if (!keep.includes(id)) this.lastStatus.delete(id);
    this.querySelectorAll<HTMLElement>('.dplab-step').forEach((s) => {
      const region = s.querySelector<HTMLElement>('.dplab-result');
      if (region && !keep.includes(s.dataset.step!)) clearResult(region);
    });
    saveLocal(this.labId, this.progress);
    this.render();
  }

  private async check(stepEl: HTMLElement, step: string, button: HTMLButtonElement): Promise<void> {
    const region = stepEl.querySelector<HTMLElement>('.dplab-result')!;
    await this.busy(stepEl, button, 'Checking…', region, FAILED.check, async () => {
      const r = await api(`/api/labs/${enc(this.labId)}/steps/${enc(step)}/check`, checkResultSchema, {
        method: 'POST',
        body: { mode: this.mode },
      });
      showResult(region, r);
      const mode = this.mode;
      void this.chart?.then((chart) => chart?.add(mode, r.figures));
      this.lastStatus.set(step, r.status);
      if (r.status === 'pass') {
        this.passMessages.set(step, r.message);
        const list = new Set(this.progress.passed[this.mode] ?? []);
        list.add(step);
        this.progress.passed[this.mode] = [...list];
        this.persist();
      }
      this.render();
    });
  }

  private async act(
    scope: HTMLElement,
    button: HTMLButtonElement,
    path: string,
    busyText: string,
    after: () => Promise<void> | void,
  ): Promise<void> {
    const region = (
      scope.classList.contains('dplab-step')
        ? scope.querySelector<HTMLElement>('.dplab-result')
        : this.querySelector<HTMLElement>('.dplab-runner-notice')
    )!;
    await this.busy(scope, button, busyText, region, FAILED[button.dataset.action ?? ''] ?? 'Could not do that:', async () => {
      await api(path, acceptedSchema, { method: 'POST', body: { mode: this.mode } });
      if (region.classList.contains('dplab-runner-notice')) region.hidden = true;
      else clearResult(region);
      await after();
    });
  }

  /** aria-busy and a disabled button while the runner works; problems land in the region, never in a dead end. */
  private async busy(
    scope: HTMLElement,
    button: HTMLButtonElement,
    text: string,
    region: HTMLElement,
    failed: string,
    work: () => Promise<void>,
  ): Promise<void> {
    const label = button.textContent;
    scope.setAttribute('aria-busy', 'true');
    button.disabled = true;
    button.textContent = text;
    region.hidden = false;
    showNote(region, 'busy', text);
    try {
      await work();
      this.hideRunnerNotice();
    } catch (err) {
      if (err instanceof RunnerUnavailable) {
        showNote(region, 'error', err.message, undefined, failed);
        this.showRunnerNotice(err.message);
      } else {
        const e = err as Error & { fix?: string };
        showNote(region, 'error', e.message, e.fix, failed);
      }
    } finally {
      scope.removeAttribute('aria-busy');
      button.disabled = false;
      button.textContent = label;
    }
  }

  private showRunnerNotice(message: string, kind = 'offline'): void {
    const n = this.querySelector<HTMLElement>('.dplab-runner-notice');
    if (!n) return;
    n.replaceChildren(richText(message));
    n.dataset.kind = kind;
    n.hidden = false;
  }

  private hideRunnerNotice(): void {
    const n = this.querySelector<HTMLElement>('.dplab-runner-notice');
    if (n?.dataset.kind === 'offline') {
      n.hidden = true;
      delete n.dataset.kind;
    }
  }
}

function enc(id: string): string {
  return encodeURIComponent(id);
}

function flash(button: HTMLButtonElement, text: string): void {
  const label = button.textContent;
  button.textContent = text;
  setTimeout(() => (button.textContent = label), 1200);
}

if (!customElements.get('dplab-lab')) customElements.define('dplab-lab', LabElement);
