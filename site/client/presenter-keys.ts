/**
 * How a lab page asks for the presenter view, without the view itself (presenter.ts, loaded
 * when it is first wanted by presenter-start.ts): its keys, whether it is on, and the few
 * lines in the page's head that say, before the first paint, that the page opens in it.
 */

/** sessionStorage: the view stays on across this tab's lab pages. */
export const PRESENT_STORE = 'dplab.present';
/** On <html> from the head until the view is on: the page opens in the presenter view, nothing else is shown meanwhile. */
export const PRESENT_ASKED = 'data-present-asked';

/**
 * For the lab page's <head> (a classic inline script: it runs before the body is painted, and
 * the page's CSP lists its hash): `?present` in the address, or the view on in this tab.
 */
export const PRESENT_EARLY_SCRIPT = [
  '(function () {',
  "  var on = new URLSearchParams(location.search).has('present');",
  `  try { on = on || sessionStorage.getItem(${JSON.stringify(PRESENT_STORE)}) === '1'; } catch (e) {}`,
  `  if (on) document.documentElement.setAttribute(${JSON.stringify(PRESENT_ASKED)}, '');`,
  '})();',
].join('\n');

/** Key → what it does; the page's key list is rendered from the same table. */
export const PRESENTER_KEYS: readonly { keys: string[]; does: string; action: Action }[] = [
  { keys: ['Shift+P'], does: 'presenter view on or off', action: 'toggle' },
  { keys: ['→', 'N', 'Page Down'], does: 'next step', action: 'next' },
  { keys: ['←', 'B', 'Page Up'], does: 'previous step', action: 'previous' },
  { keys: ['C'], does: 'check this step', action: 'check' },
  { keys: ['H'], does: 'show the next hint', action: 'hint' },
  { keys: ['G'], does: 'bring the cluster to the start of this step', action: 'goto' },
  { keys: ['T'], does: 'put the cursor in the terminal', action: 'terminal' },
  { keys: ['Esc'], does: 'leave the presenter view', action: 'exit' },
];
export type Action = 'toggle' | 'next' | 'previous' | 'check' | 'hint' | 'goto' | 'reset' | 'reset-lab' | 'terminal' | 'exit' | 'dismiss';

export function actionFor(ev: KeyboardEvent): Action | null {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return null;
  const k = ev.key;
  if (k === 'P' && ev.shiftKey) return 'toggle';
  if (!presenting()) return null;
  if (k === 'ArrowRight' || k === 'PageDown' || k === 'n' || k === 'N') return 'next';
  if (k === 'ArrowLeft' || k === 'PageUp' || k === 'b' || k === 'B') return 'previous';
  if (k === 'c' || k === 'C') return 'check';
  if (k === 'h' || k === 'H') return 'hint';
  if (k === 'g' || k === 'G') return 'goto';
  if (k === 't' || k === 'T') return 'terminal';
  if (k === 'Escape') return 'exit';
  return null;
}

/** Focus in the terminal, a field, a tab list or the divider: the keys belong to it. */
export function keysBelongElsewhere(target: EventTarget | null): boolean {
  const el = target instanceof Element ? target : null;
  if (!el) return false;
  return !!el.closest(
    'input, textarea, select, [contenteditable=""], [contenteditable="true"], dplab-terminal, dplab-terminal-watch, [role="tab"], [role="separator"], summary',
  );
}

export function presenting(): boolean {
  return document.documentElement.hasAttribute('data-present');
}
