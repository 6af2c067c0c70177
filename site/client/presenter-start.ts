/**
 * Loads the presenter view (presenter.ts, the <dplab-presenter> element with its controls and
 * the fast-forward stream) only when it is first wanted: the page opens in it (PRESENT_ASKED,
 * set in the head), or the Present button or Shift+P asks for it. The click or key that loads
 * it is handed over; from then on the element's own listeners answer.
 */
import { PRESENT_ASKED, actionFor, keysBelongElsewhere } from './presenter-keys.ts';
import type { PresenterElement } from './presenter.ts';

const root = document.documentElement;
const waiting = new AbortController();

async function load(toggle: boolean): Promise<void> {
  waiting.abort();
  try {
    await import('./presenter.ts');
  } catch (err) {
    // The page stays usable without the view; nothing waits hidden for it.
    root.removeAttribute(PRESENT_ASKED);
    console.error('The presenter view did not load:', err);
    return;
  }
  if (toggle) document.querySelector<PresenterElement>('dplab-presenter')?.toggle();
}

if (document.querySelector('dplab-presenter')) {
  if (root.hasAttribute(PRESENT_ASKED)) void load(false);
  else {
    const { signal } = waiting;
    document.querySelectorAll('[data-present-toggle]').forEach((b) => b.addEventListener('click', () => void load(true), { signal }));
    document.addEventListener(
      'keydown',
      (ev) => {
        if (actionFor(ev) !== 'toggle' || keysBelongElsewhere(ev.target)) return;
        ev.preventDefault();
        void load(true);
      },
      { signal },
    );
  }
}
