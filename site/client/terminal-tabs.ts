/**
 * <dplab-terminal-tabs>: tabs for the learner's shell, a shell on each node of the page's
 * cluster, and the dataplane view. Node tabs appear when the cluster is ready (the cluster
 * status says so with a `dplab:cluster` event) and are dropped when the page's mode changes:
 * every tab follows the one mode. A node shell starts when its tab is first opened, and the
 * Follow tab's mirror (terminal-watch.ts) loads when that tab is first opened.
 */
import { api, SEAT_PAGE_ATTRIBUTE } from './runner-api.ts';
import { clusterNodesSchema } from '../../scripts/wire/clusters.ts';
import { broadcastStateSchema } from '../../scripts/wire/terminal.ts';
import { lastClusterState, onClusterState } from './cluster-state-event.ts';
import { onPageModeChange, pageMode } from './page-mode.ts';

/** The read-only mirror's element, loaded once, when the Follow tab is first opened. */
let watchLoaded: Promise<unknown> | null = null;
function loadWatch(): Promise<unknown> {
  // A failed load (the runner restarted with another build) is tried again next time.
  return (watchLoaded ??= import('./terminal-watch.ts').catch((err: unknown) => {
    watchLoaded = null;
    throw err;
  }));
}

class TerminalTabs extends HTMLElement {
  private list!: HTMLElement;
  /** The mode whose nodes the node tabs show ("" when none). */
  private nodesOf = '';
  private loading: AbortController | null = null;

  connectedCallback(): void {
    if (this.list) return;
    this.list = this.querySelector<HTMLElement>('[role="tablist"]')!;
    this.list.addEventListener('click', (ev) => {
      const tab = (ev.target as HTMLElement).closest<HTMLElement>('[role="tab"]');
      if (tab) this.select(tab);
    });
    this.list.addEventListener('keydown', (ev) => this.onKey(ev));
    this.addEventListener('dplab:reveal', (ev) => {
      const panel = (ev.target as HTMLElement).closest<HTMLElement>('[role="tabpanel"]');
      const tab = panel && this.list.querySelector<HTMLElement>(`[aria-controls="${CSS.escape(panel.id)}"]`);
      if (tab) this.select(tab);
    });
    this.followForm();
    void this.offerFollow();
    if (!this.hasAttribute('data-nodes')) return;
    const follow = (mode: string, state: string | undefined) => {
      if (mode !== pageMode()) return;
      if (state === 'ready') void this.loadNodes(mode);
      else this.dropNodes();
    };
    onPageModeChange(({ mode }) => {
      this.dropNodes();
      follow(mode, lastClusterState(mode));
    });
    onClusterState(({ mode, state }) => follow(mode, state));
    follow(pageMode(), lastClusterState(pageMode()));
  }

  /**
   * The Follow tab only where there is an instructor to follow: a workshop seat's page (the
   * portal marks it), a page opened with `?follow` (an instructor's link; `?follow=<viewer link>`
   * fills the form in), or a runner whose presenter is broadcasting (a terminal pinned or watched).
   */
  private async offerFollow(): Promise<void> {
    const tab = this.list.querySelector<HTMLElement>('[data-tab="follow"]');
    if (!tab) return;
    const asked = new URLSearchParams(location.search).get('follow');
    const link = this.querySelector<HTMLInputElement>('.dplab-follow-form input[name="link"]');
    if (asked && link && !link.value) link.value = asked;
    let presenter = false;
    if (!document.documentElement.hasAttribute(SEAT_PAGE_ATTRIBUTE) && asked === null) {
      try {
        const state = await api('/api/terminal/broadcast', broadcastStateSchema);
        presenter = state.pinned || state.watchers > 0;
      } catch {
        // No runner, or an older one: nobody to follow that this page can tell of.
      }
    }
    tab.hidden = !(document.documentElement.hasAttribute(SEAT_PAGE_ATTRIBUTE) || asked !== null || presenter);
  }

  /**
   * "Follow the instructor": a viewer link on this same runner is watched directly; one on the
   * instructor's runner (another origin) is framed, since only its own page may open its socket.
   */
  private followForm(): void {
    const form = this.querySelector<HTMLFormElement>('.dplab-follow-form');
    const view = this.querySelector<HTMLElement>('.dplab-follow-view');
    const note = this.querySelector<HTMLElement>('.dplab-follow-note');
    if (!form || !view || !note) return;
    const stop = form.querySelector<HTMLButtonElement>('[data-follow-stop]')!;
    const follow = (what: HTMLElement) => {
      view.replaceChildren(what);
      stop.hidden = false;
    };
    const watch = async (token: string | null) => {
      // Defined before it is made, so the token lands on the element's own property.
      try {
        await loadWatch();
      } catch {
        note.textContent = 'The read-only view did not load. Reload the page and try again.';
        return;
      }
      const el = document.createElement('dplab-terminal-watch') as HTMLElement & { viewerToken: string | null };
      el.viewerToken = token;
      el.setAttribute('role', 'region');
      el.setAttribute('aria-label', "The instructor's terminal, read-only");
      el.innerHTML =
        '<p class="dplab-terminal-status" aria-live="polite"></p><p class="dplab-watch-notice" aria-live="polite"></p><div class="dplab-terminal-screen"></div>';
      follow(el);
    };
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const text = new FormData(form).get('link');
      let url: URL;
      try {
        url = new URL(String(text ?? ''));
      } catch {
        note.textContent = 'That is not a link. Paste the whole viewer link, starting with http://.';
        return;
      }
      const token = /(?:^#|&)viewer=([A-Za-z0-9._~-]+)/.exec(url.hash)?.[1];
      if (!/^https?:$/.test(url.protocol) || url.pathname !== '/watch/' || !token) {
        note.textContent = 'A viewer link looks like http://<instructor>:4321/watch/#viewer=…; ask the instructor for theirs.';
        return;
      }
      note.textContent = "Following the instructor's terminal (read-only).";
      if (url.origin === location.origin) void watch(token);
      else {
        const frame = document.createElement('iframe');
        frame.title = "The instructor's terminal, read-only";
        frame.src = url.href;
        frame.referrerPolicy = 'no-referrer';
        follow(frame);
      }
    });
    form.querySelector('[data-follow-here]')?.addEventListener('click', () => {
      note.textContent = "Following this runner's presenter (read-only).";
      void watch(null);
    });
    stop.addEventListener('click', () => {
      view.replaceChildren();
      stop.hidden = true;
      note.textContent = 'Stopped following.';
    });
  }

  private tabs(): HTMLElement[] {
    return [...this.list.querySelectorAll<HTMLElement>('[role="tab"]:not([hidden])')];
  }

  select(tab: HTMLElement): void {
    for (const t of this.list.querySelectorAll<HTMLElement>('[role="tab"]')) {
      const on = t === tab;
      t.setAttribute('aria-selected', String(on));
      t.tabIndex = on ? 0 : -1;
      const panel = document.getElementById(t.getAttribute('aria-controls') ?? '');
      if (panel) panel.hidden = !on;
    }
    if (tab.dataset.tab === 'follow') loadWatch().catch(() => undefined);
    const panel = document.getElementById(tab.getAttribute('aria-controls') ?? '');
    if (panel && tab.dataset.node && !panel.querySelector('dplab-terminal'))
      panel.append(nodeTerminal(tab.dataset.mode!, tab.dataset.node));
    panel?.querySelector<HTMLElement>('dplab-terminal textarea')?.focus();
  }

  private onKey(ev: KeyboardEvent): void {
    const tabs = this.tabs();
    const i = tabs.indexOf(ev.target as HTMLElement);
    if (i < 0) return;
    let next: number;
    if (ev.key === 'ArrowRight') next = (i + 1) % tabs.length;
    else if (ev.key === 'ArrowLeft') next = (i + tabs.length - 1) % tabs.length;
    else if (ev.key === 'Home') next = 0;
    else if (ev.key === 'End') next = tabs.length - 1;
    else return;
    ev.preventDefault();
    this.select(tabs[next]);
    tabs[next].focus();
  }

  private async loadNodes(mode: string): Promise<void> {
    if (this.nodesOf === mode) return;
    this.loading?.abort();
    const controller = (this.loading = new AbortController());
    try {
      const { nodes } = await api(`/api/clusters/${encodeURIComponent(mode)}/nodes`, clusterNodesSchema, { signal: controller.signal });
      if (controller.signal.aborted || mode !== pageMode()) return;
      this.dropNodes();
      this.nodesOf = mode;
      const before = this.list.querySelector('[data-tab="dataplane"], [data-tab="follow"]');
      nodes.forEach((node, i) => {
        const id = `dplab-tt-node-${i}`;
        const tab = document.createElement('button');
        Object.assign(tab, { type: 'button', id: `${id}-tab`, tabIndex: -1, textContent: shortName(node, mode) });
        tab.setAttribute('role', 'tab');
        tab.setAttribute('aria-selected', 'false');
        tab.setAttribute('aria-controls', id);
        tab.title = `A shell on node ${node}`;
        Object.assign(tab.dataset, { tab: 'node', node, mode });
        this.list.insertBefore(tab, before);
        const panel = document.createElement('div');
        Object.assign(panel, { id, className: 'dplab-tt-panel', hidden: true });
        panel.setAttribute('role', 'tabpanel');
        panel.setAttribute('aria-labelledby', tab.id);
        this.append(panel);
      });
    } catch {
      // No node list (runner away, cluster gone): the learner's shell is still there.
    }
  }

  /** A mode change or a cluster that is no longer ready: node shells go, the learner's shell stays. */
  private dropNodes(): void {
    this.loading?.abort();
    this.nodesOf = '';
    const wasOpen = this.list.querySelector('[data-tab="node"][aria-selected="true"]');
    for (const tab of this.list.querySelectorAll<HTMLElement>('[data-tab="node"]')) {
      document.getElementById(tab.getAttribute('aria-controls') ?? '')?.remove();
      tab.remove();
    }
    if (wasOpen) this.select(this.list.querySelector<HTMLElement>('[data-tab="shell"]')!);
  }
}

function shortName(node: string, mode: string): string {
  return node.startsWith(`dplab-${mode}-`) ? node.slice(`dplab-${mode}-`.length) : node;
}

/** The same markup Terminal.astro renders, for a shell on one node. */
function nodeTerminal(mode: string, node: string): HTMLElement {
  const t = document.createElement('dplab-terminal');
  t.setAttribute('mode', mode);
  t.setAttribute('node', node);
  t.setAttribute('role', 'region');
  t.setAttribute('aria-label', `Shell on node ${node}`);
  t.className = 'not-content';
  t.dataset.state = 'idle';
  const status = document.createElement('p');
  status.className = 'dplab-terminal-status';
  status.setAttribute('aria-live', 'polite');
  const screen = document.createElement('div');
  screen.className = 'dplab-terminal-screen';
  t.append(status, screen);
  return t;
}

if (!customElements.get('dplab-terminal-tabs')) customElements.define('dplab-terminal-tabs', TerminalTabs);
