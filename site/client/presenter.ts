/**
 * The presenter view of a lab page (`?present`, the Present button, or Shift+P): one step at a
 * time in projector-sized text, high contrast, the site's chrome hidden, and keys for the
 * presenter's remote or keyboard. Presenter controls also bring the cluster to the start of
 * the shown step (POST …/steps/:step/goto, progress streamed as Server-Sent Events) and hand
 * out the viewer link (the read-only mirror of the presenter's terminal).
 *
 * Keys act only when focus is not in the terminal or a form field, so typing is never taken.
 */
import { gotoEventSchema, type GotoResult } from '../../scripts/wire/goto.ts';
import { errorBodySchema } from '../../scripts/wire/errors.ts';
import { viewerLinkSchema } from '../../scripts/wire/terminal.ts';
import { setPresentingFontSize } from './font-size.ts';
import { PRESENT_ASKED, PRESENT_STORE, PRESENTER_KEYS, actionFor, keysBelongElsewhere, presenting, type Action } from './presenter-keys.ts';
import { pageMode } from './page-mode.ts';
import { api, RunnerUnavailable } from './runner-api.ts';
import { runnerFetch } from './runner-auth.ts';

class PresenterElement extends HTMLElement {
  private index = 0;
  private lab!: HTMLElement;
  private running: AbortController | null = null;

  connectedCallback(): void {
    const lab = this.closest<HTMLElement>('dplab-lab');
    if (!lab || this.lab) return;
    this.lab = lab;
    this.renderKeys();
    this.addEventListener('click', (ev) => {
      const b = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-present]');
      if (!b) return;
      // A control from the More menu closes it; focus goes back to its summary, not to the page.
      const menu = b.closest<HTMLDetailsElement>('.dplab-present-more');
      if (menu) {
        menu.open = false;
        menu.querySelector('summary')?.focus();
      }
      this.do(b.dataset.present as Action);
    });
    lab.querySelectorAll<HTMLButtonElement>('[data-present-toggle]').forEach((b) => b.addEventListener('click', () => this.do('toggle')));
    document.addEventListener('keydown', (ev) => {
      const action = actionFor(ev);
      if (!action || keysBelongElsewhere(ev.target)) return;
      ev.preventDefault();
      this.do(action);
    });
    // Asked for before the page painted (PRESENT_EARLY_SCRIPT in the page's head).
    if (document.documentElement.hasAttribute(PRESENT_ASKED)) this.set(true);
  }

  /** presenter-start.ts hands over the click or key that loaded this module. */
  toggle(): void {
    this.do('toggle');
  }

  private steps(): HTMLElement[] {
    return [...this.lab.querySelectorAll<HTMLElement>('.dplab-step')];
  }

  private current(): HTMLElement | undefined {
    return this.steps()[this.index];
  }

  private do(action: Action): void {
    const step = this.current();
    switch (action) {
      case 'toggle':
        return this.set(!presenting());
      case 'exit':
        return this.set(false);
      case 'next':
        return this.show(this.index + 1);
      case 'previous':
        return this.show(this.index - 1);
      case 'check':
        step?.querySelector<HTMLButtonElement>('[data-action="check"]')?.click();
        return;
      case 'hint':
        step?.querySelector<HTMLButtonElement>('[data-action="hint"]:not([hidden])')?.click();
        return;
      case 'goto':
        void this.goto(false);
        return;
      case 'reset':
        void this.goto(true);
        return;
      case 'reset-lab':
        // The lab's own Reset (in the bar the presenter view hides), which asks before it acts.
        this.lab.querySelector<HTMLButtonElement>('[data-action="reset-lab"]')?.click();
        return;
      case 'dismiss':
        if (!this.running) this.querySelector<HTMLElement>('.dplab-present-progress')!.hidden = true;
        return;
      case 'terminal':
        this.lab.querySelector<HTMLElement>('dplab-terminal:not([node]) textarea')?.focus();
        return;
    }
  }

  private set(on: boolean): void {
    document.documentElement.toggleAttribute('data-present', on);
    document.documentElement.removeAttribute(PRESENT_ASKED);
    this.hidden = !on;
    try {
      if (on) sessionStorage.setItem(PRESENT_STORE, '1');
      else sessionStorage.removeItem(PRESENT_STORE);
    } catch {
      // storage disabled
    }
    const url = new URL(location.href);
    if (on) url.searchParams.set('present', '');
    else url.searchParams.delete('present');
    history.replaceState(history.state, '', url.pathname + url.search.replace(/=(?=&|$)/g, '') + url.hash);
    setPresentingFontSize(on);
    if (on) {
      // Start at the first step not done yet.
      const first = this.steps().findIndex((s) => s.dataset.status !== 'pass');
      this.show(first < 0 ? 0 : first);
      void this.loadViewerLink();
    } else this.steps().forEach((s) => s.removeAttribute('data-current'));
    window.dispatchEvent(new Event('resize'));
  }

  private show(i: number): void {
    const steps = this.steps();
    if (!steps.length) return;
    this.index = Math.max(0, Math.min(steps.length - 1, i));
    steps.forEach((s, n) => s.toggleAttribute('data-current', n === this.index));
    const step = steps[this.index];
    const title = step.querySelector('.dplab-step-title')?.textContent?.replace(/\s+/g, ' ').trim() ?? '';
    this.querySelector('.dplab-present-where')!.textContent = `Step ${this.index + 1} of ${steps.length}`;
    this.querySelector<HTMLButtonElement>('[data-present="previous"]')!.disabled = this.index === 0;
    this.querySelector<HTMLButtonElement>('[data-present="next"]')!.disabled = this.index === steps.length - 1;
    const live = this.querySelector('.dplab-present-live');
    if (live) live.textContent = `Step ${this.index + 1} of ${steps.length}: ${title.replace(/^[○✓✗!]\s*/, '')}`;
    step.closest('.dplab-instructions')?.scrollTo({ top: 0 });
    step.scrollIntoView({ block: 'start' });
  }

  private renderKeys(): void {
    const list = this.querySelector('.dplab-present-keys dl');
    if (!list) return;
    for (const k of PRESENTER_KEYS) {
      const dt = document.createElement('dt');
      k.keys.forEach((key, i) => {
        if (i) dt.append(' or ');
        const kbd = document.createElement('kbd');
        kbd.textContent = key;
        dt.append(kbd);
      });
      const dd = document.createElement('dd');
      dd.textContent = k.does;
      list.append(dt, dd);
    }
  }

  private async loadViewerLink(): Promise<void> {
    const out = this.querySelector<HTMLInputElement>('.dplab-present-viewer input');
    if (!out || out.value) return;
    try {
      const { path } = await api('/api/terminal/viewer-link', viewerLinkSchema);
      out.value = `${location.origin}${path}`;
    } catch {
      out.placeholder = 'No runner: start it to get the viewer link';
    }
  }

  /** Bring the cluster to the start of the shown step (or reset to it), with its progress listed as it goes. */
  private async goto(reset: boolean): Promise<void> {
    const step = this.current()?.dataset.step;
    const labId = this.lab.getAttribute('lab');
    if (!step || !labId || this.running) return;
    const list = this.querySelector<HTMLOListElement>('.dplab-present-progress ol')!;
    const status = this.querySelector<HTMLElement>('.dplab-present-progress p')!;
    const box = this.querySelector<HTMLElement>('.dplab-present-progress')!;
    box.hidden = false;
    box.dataset.state = 'running';
    list.replaceChildren();
    status.textContent = reset
      ? `Resetting and bringing the cluster to step ${this.index + 1}…`
      : `Bringing the cluster to step ${this.index + 1}…`;
    const controller = (this.running = new AbortController());
    this.querySelectorAll<HTMLButtonElement>('[data-present="goto"], [data-present="reset"]').forEach((b) => (b.disabled = true));
    try {
      const res = await runnerFetch(`/api/labs/${encodeURIComponent(labId)}/steps/${encodeURIComponent(step)}/goto`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ mode: pageMode() || undefined, reset }),
        signal: controller.signal,
      });
      if (res.status === 401) throw new RunnerUnavailable('unauthorised');
      if (!res.ok || !res.body) {
        const body = errorBodySchema.safeParse(await res.json().catch(() => undefined));
        throw new Error(
          body.success ? `${body.data.error.message}${body.data.error.fix ? ` ${body.data.error.fix}` : ''}` : `HTTP ${res.status}`,
        );
      }
      const result = await this.readProgress(res.body, list);
      box.dataset.state = result.status;
      status.textContent = `${result.message}${result.fix ? ` ${result.fix}` : ''}`;
      this.lab.dispatchEvent(new CustomEvent('dplab:lab-moved', { detail: { step, reset } }));
    } catch (err) {
      box.dataset.state = 'error';
      status.textContent = err instanceof TypeError ? new RunnerUnavailable('offline').message : (err as Error).message;
    } finally {
      this.running = null;
      this.querySelectorAll<HTMLButtonElement>('[data-present="goto"], [data-present="reset"]').forEach((b) => (b.disabled = false));
    }
  }

  /** Reads the SSE body: one list item per action, its mark updated as it ends; returns the result. */
  private async readProgress(body: ReadableStream<Uint8Array>, list: HTMLOListElement): Promise<GotoResult> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const items = new Map<string, HTMLLIElement>();
    let buffer = '';
    let result: GotoResult | null = null;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = block.split('\n').find((l) => l.startsWith('data: '));
        if (!data) continue;
        const raw: unknown = JSON.parse(data.slice(6));
        if ((raw as { type?: string }).type === 'error') throw new Error((raw as { error: { message: string } }).error.message);
        const parsed = gotoEventSchema.safeParse(raw);
        if (!parsed.success) continue;
        const e = parsed.data;
        if (e.type === 'result') result = e.result;
        else if (e.type === 'action') {
          let li = items.get(e.id);
          if (!li) {
            li = document.createElement('li');
            items.set(e.id, li);
            list.append(li);
          }
          li.dataset.phase = e.phase;
          const mark = e.phase === 'start' ? '…' : e.phase === 'end' ? '✓' : e.phase === 'fail' ? '✗' : '–';
          const seconds = e.elapsedMs === undefined ? '' : ` (${(e.elapsedMs / 1000).toFixed(1)} s)`;
          li.textContent = `${mark} ${e.title}${seconds}`;
        }
      }
    }
    if (!result) throw new Error('The runner ended the run without a result; look at its terminal.');
    return result;
  }
}

if (!customElements.get('dplab-presenter')) customElements.define('dplab-presenter', PresenterElement);

export type { PresenterElement };
