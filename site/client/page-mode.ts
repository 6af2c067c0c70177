/**
 * The page's one cluster mode. The terminal, Check, solve, reset, the cluster status and the
 * dataplane view all read it here and follow its change event, so a learner is never checked
 * on another cluster than the one their shell uses.
 *
 * The workspace root says where the mode is kept: `<… data-mode-scope="lab:first-service"
 * data-modes="iptables cilium">` (a lab keeps it with its progress) or `data-mode-scope="scratch"`
 * (the scratch terminal, where "" means a shell with no cluster). Whoever asks first (a
 * terminal may connect before the lab panel upgrades) initialises it; everyone gets the same.
 */
import { loadLocal } from './lab/progress-store.ts';

const EVENT = 'dplab:mode';
const SCRATCH_KEY = 'dplab:scratch-mode';

export interface ModeChange {
  mode: string;
  previous: string;
}

function scopeRoot(): HTMLElement | null {
  return document.querySelector<HTMLElement>('[data-mode-scope]');
}

/** The modes this page offers, in order. */
function pageModes(): string[] {
  return (scopeRoot()?.dataset.modes ?? '').split(' ').filter(Boolean);
}

function stored(scope: string): string | undefined {
  if (scope.startsWith('lab:')) return loadLocal(scope.slice(4)).mode;
  try {
    return localStorage.getItem(SCRATCH_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

/** The page's mode ("" when the page has none, or the scratch shell points at no cluster). */
export function pageMode(): string {
  const html = document.documentElement;
  if (html.dataset.dplabMode !== undefined) return html.dataset.dplabMode;
  const root = scopeRoot();
  if (!root) return '';
  const scope = root.dataset.modeScope ?? '';
  const modes = pageModes();
  const saved = stored(scope);
  const fallback = scope === 'scratch' ? '' : (modes[0] ?? '');
  const mode = saved !== undefined && (modes.includes(saved) || (scope === 'scratch' && saved === '')) ? saved : fallback;
  html.dataset.dplabMode = mode;
  return mode;
}

/** Change the page's mode; listeners run only when it really changes. The lab panel persists a lab's choice. */
export function setPageMode(mode: string): void {
  const previous = pageMode();
  const allowed = pageModes();
  const scope = scopeRoot()?.dataset.modeScope ?? '';
  if (mode === previous || !(allowed.includes(mode) || (scope === 'scratch' && mode === ''))) return;
  document.documentElement.dataset.dplabMode = mode;
  if (scope === 'scratch') {
    try {
      localStorage.setItem(SCRATCH_KEY, mode);
    } catch {
      // private mode: the choice lasts for this page view
    }
  }
  document.dispatchEvent(new CustomEvent<ModeChange>(EVENT, { detail: { mode, previous } }));
}

export function onPageModeChange(listener: (change: ModeChange) => void): () => void {
  const handler = (ev: Event) => listener((ev as CustomEvent<ModeChange>).detail);
  document.addEventListener(EVENT, handler);
  return () => document.removeEventListener(EVENT, handler);
}
