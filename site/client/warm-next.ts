/**
 * <dplab-warm-next data-upcoming='[…]' data-mode-names='{…}'>: once this lab's cluster is ready, the runner is asked to
 * start the next lab's cluster ahead (POST /api/clusters/:mode/warm; the runner decides, see
 * scripts/clusters/warm-decision.ts), and one line says what is starting, for which lab, how far
 * it is, and offers to stop it. Stopping deletes that cluster and turns starting ahead off in
 * this browser (every lab page reads the same setting); the line then offers to turn it on.
 * A decline says the runner's reason, quietly.
 */
import {
  clusterEventSchema,
  clusterListSchema,
  clusterStatusSchema,
  clusterWarmSchema,
  type ClusterStatus,
} from '../../scripts/wire/clusters.ts';
import { api, RunnerUnavailable } from './runner-api.ts';
import { lastClusterState, onClusterState } from './cluster-state-event.ts';
import { onPageModeChange, pageMode } from './page-mode.ts';
import { openRunnerEvents } from './runner-events.ts';
import { loadLocal } from './lab/progress-store.ts';
import { askAhead, type UpcomingLab, type WarmTarget } from './lab/next-warm.ts';
import { el } from './dom.ts';

/** Set to "off" when the learner stops a cluster started ahead; every lab page respects it. */
const WARM_OFF_KEY = 'dplab:warm-ahead';

type View =
  | { kind: 'hidden' }
  | { kind: 'warming'; target: WarmTarget; step?: string }
  | { kind: 'ready'; target: WarmTarget }
  /** Stop pressed: the start is being cancelled and what it made deleted (a few seconds on kind). */
  | { kind: 'stopping'; target: WarmTarget }
  | { kind: 'failed'; target: WarmTarget }
  | { kind: 'declined'; message: string }
  | { kind: 'off' };

function warmingOff(): boolean {
  try {
    return localStorage.getItem(WARM_OFF_KEY) === 'off';
  } catch {
    return false;
  }
}

function setWarmingOff(off: boolean): void {
  try {
    if (off) localStorage.setItem(WARM_OFF_KEY, 'off');
    else localStorage.removeItem(WARM_OFF_KEY);
  } catch {
    // private mode: the choice lasts for this page view
  }
}

export class WarmNext extends HTMLElement {
  #view: View = { kind: 'hidden' };
  #asked = new Set<string>();
  #source?: { close(): void };
  #off: (() => void)[] = [];
  #busy = false;
  /** Modes the runner said this host cannot start (its preflight's first failure): asked once a page. */
  #hostCannot = new Set<string>();

  connectedCallback(): void {
    this.setAttribute('role', 'status');
    this.setAttribute('aria-live', 'polite');
    this.#off.push(
      onClusterState((e) => {
        if (e.mode === pageMode() && e.state === 'ready') void this.#ask();
      }),
      onPageModeChange(() => {
        if (lastClusterState(pageMode()) === 'ready') void this.#ask();
      }),
    );
    if (lastClusterState(pageMode()) === 'ready') void this.#ask();
    this.#render();
  }

  disconnectedCallback(): void {
    for (const off of this.#off.splice(0)) off();
    this.#source?.close();
  }

  #upcoming(): UpcomingLab[] {
    return (readJson(this.dataset.upcoming) as UpcomingLab[] | undefined) ?? [];
  }

  /** A mode's short name ("nftables", "Cilium eBPF"), from the markup (MODE_INFO). */
  #name(mode: string): string {
    return (readJson(this.dataset.modeNames) as Record<string, string> | undefined)?.[mode] ?? mode;
  }

  /**
   * Once per page mode (and again after "Turn on"): find the next lab's mode, ask the runner. A
   * mode this host cannot start (a kernel without ip_vs) is passed over for the lab after it; its
   * own lab page says why when the learner gets there, so its sentence shows only when nothing
   * else can start ahead.
   */
  async #ask(again = false): Promise<void> {
    const current = pageMode();
    if (!again && this.#asked.has(current)) return;
    this.#asked.add(current);
    try {
      const { clusters } = await api('/api/clusters', clusterListSchema);
      const byMode = new Map(clusters.map((c) => [c.mode as string, c]));
      const r = await askAhead(
        this.#upcoming(),
        current,
        (m) => {
          const c = byMode.get(m);
          if (c?.startedAhead) return 'ahead';
          return c && c.state === 'absent' && !c.blocked ? 'none' : 'other';
        },
        (lab) => loadLocal(lab).mode,
        this.#hostCannot,
        (mode) =>
          api(`/api/clusters/${encodeURIComponent(mode)}/warm`, clusterWarmSchema, { method: 'POST', body: { optedOut: warmingOff() } }),
      );
      const declined = (message: string): View => ({
        kind: 'declined',
        message: `Not starting the next lab’s cluster ahead: ${lowerFirst(message)}`,
      });
      if (r.kind === 'none') return this.#show(r.cannotStart === undefined ? { kind: 'hidden' } : declined(r.cannotStart));
      const { target } = r;
      if (r.kind === 'ahead') {
        const c = byMode.get(target.mode)!;
        this.#show(c.state === 'ready' ? { kind: 'ready', target } : { kind: 'warming', target, step: stepText(c) });
        return this.#follow(target);
      }
      const { answer } = r;
      if (answer.outcome === 'warming') {
        this.#show({ kind: 'warming', target });
        this.#follow(target);
      } else if (answer.reason === 'opted-out') this.#show({ kind: 'off' });
      // The runner's own settings (--no-warm, a workshop seat) are not the learner's to change: no line on every page.
      else if (answer.reason === 'exists' || answer.reason === 'off' || answer.reason === 'seat') this.#show({ kind: 'hidden' });
      else this.#show(declined(answer.message));
    } catch (err) {
      // No runner, or it said no in another way: the cluster panel already says what matters.
      if (!(err instanceof RunnerUnavailable)) console.warn('[dplab] starting the next cluster ahead:', err);
      this.#show({ kind: 'hidden' });
    }
  }

  /** Progress and the end of the run, from the runner's event stream. */
  #follow(target: WarmTarget): void {
    this.#source?.close();
    const status = (s: ClusterStatus) => {
      if (s.state === 'ready') this.#show({ kind: 'ready', target });
      else if (s.state === 'absent' || s.state === 'broken') this.#show(s.error ? { kind: 'failed', target } : { kind: 'hidden' });
      else if (s.progress) this.#show({ kind: 'warming', target, step: stepText(s) });
    };
    this.#source = openRunnerEvents('/api/clusters/events', {
      onEvent: (type, data) => {
        try {
          if (type === 'snapshot') {
            const mine = clusterListSchema.parse(JSON.parse(data)).clusters.find((c) => c.mode === target.mode);
            if (mine) status(mine);
            return;
          }
          const e = clusterEventSchema.parse(JSON.parse(data));
          if (e.mode !== target.mode || (this.#view.kind !== 'warming' && this.#view.kind !== 'ready')) return;
          if (e.type === 'status') status(e.status);
          else if (e.type === 'action' && e.phase === 'start') this.#show({ kind: 'warming', target, step: e.title });
        } catch {
          // A malformed frame is ignored; the next status event repairs the line.
        }
      },
      onGiveUp: () => this.#show({ kind: 'hidden' }),
    });
  }

  /** Stop: delete the cluster started ahead, and start none ahead again (in this browser). */
  async #stop(target: WarmTarget): Promise<void> {
    setWarmingOff(true);
    this.#source?.close();
    this.#source = undefined;
    this.#busy = true;
    this.#show({ kind: 'stopping', target });
    try {
      await api(`/api/clusters/${encodeURIComponent(target.mode)}`, clusterStatusSchema, { method: 'DELETE' });
    } catch (err) {
      console.warn('[dplab] stopping the cluster started ahead:', err);
    } finally {
      this.#busy = false;
    }
    this.#show({ kind: 'off' });
  }

  #turnOn(): void {
    setWarmingOff(false);
    void this.#ask(true);
  }

  #show(view: View): void {
    this.#view = view;
    this.#render();
  }

  #render(): void {
    const v = this.#view;
    this.hidden = v.kind === 'hidden';
    this.dataset.state = v.kind;
    const hadFocus = this.contains(document.activeElement);
    const button = (label: string, onClick: () => void) => {
      const b = el('button', { type: 'button', class: 'dplab-warm-button' }, label);
      b.disabled = this.#busy;
      b.addEventListener('click', onClick);
      return b;
    };
    const labTitle = (t: WarmTarget) => el('a', { href: `/labs/${t.lab.id}/` }, t.lab.title);
    const name = (t: WarmTarget) => this.#name(t.mode);
    let parts: (Node | string)[] = [];
    let control: HTMLButtonElement | undefined;
    if (v.kind === 'warming') {
      parts = [
        `Starting the ${name(v.target)} cluster for the next lab, `,
        labTitle(v.target),
        ', in the background.',
        v.step ? ` Now: ${v.step}.` : '',
      ];
      control = button('Stop, and don’t start ahead', () => void this.#stop(v.target));
    } else if (v.kind === 'ready') {
      parts = [`The ${name(v.target)} cluster for the next lab, `, labTitle(v.target), ', is ready.'];
      control = button('Delete it, and don’t start ahead', () => void this.#stop(v.target));
    } else if (v.kind === 'stopping') {
      parts = [`Stopping the ${name(v.target)} cluster started ahead for `, labTitle(v.target), ' and deleting it…'];
    } else if (v.kind === 'failed') {
      parts = [`Starting the ${name(v.target)} cluster for `, labTitle(v.target), ' ahead did not work; that lab’s page will start it.'];
    } else if (v.kind === 'declined') {
      parts = [v.message];
    } else if (v.kind === 'off') {
      parts = ['Starting the next lab’s cluster ahead is off.'];
      control = button('Turn it on', () => this.#turnOn());
    }
    const text = el('span', { class: 'dplab-warm-text' }, ...parts);
    this.replaceChildren(text, ...(control ? [control] : []));
    if (!hadFocus) return;
    // Focus stays in the line (a keyboard user pressed Stop here): on its button, or on the text while it has none.
    if (control) control.focus({ preventScroll: true });
    else {
      text.tabIndex = -1;
      text.focus({ preventScroll: true });
    }
  }
}

/** "The iptables cluster is…" → "the iptables cluster is…", after a colon. */
function lowerFirst(text: string): string {
  return /^[A-Z][a-z]/.test(text) ? text.charAt(0).toLowerCase() + text.slice(1) : text;
}

function readJson(text: string | undefined): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function stepText(s: ClusterStatus): string | undefined {
  const actions = s.progress?.actions ?? [];
  const running = actions.findLast((a) => a.state === 'running');
  return running?.title;
}

if (!customElements.get('dplab-warm-next')) customElements.define('dplab-warm-next', WarmNext);
