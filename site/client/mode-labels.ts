/**
 * The mode picker below 100rem (a phone, a laptop) and in the presenter view: its options show
 * their short word ("iptables") instead of the full title, which would not leave the one-row top
 * bar room for the rest (LabLayout.astro hides the word "Cluster" there too). Each option keeps
 * the full title as its accessible name (aria-label, set in the markup) and the select shows the
 * chosen one's title on hover; the values, and so the keyboard and the page's mode, do not change.
 * A lab with one mode shows it as text, switched by CSS at the same width.
 */
import { onPageModeChange } from './page-mode.ts';

const presenting = () => document.documentElement.hasAttribute('data-present');

/** Where the full titles would not fit the bar; the same width as `.dplab-mode-short` in LabLayout.astro. */
const SHORT_LABELS = '(width < 100rem)';

export function shortModeLabels(root: ParentNode): void {
  const selects = [...root.querySelectorAll<HTMLSelectElement>('.dplab-mode-picker select')];
  if (!selects.length) return;
  const narrow = window.matchMedia(SHORT_LABELS);
  const apply = () => {
    for (const select of selects) {
      for (const option of select.options) {
        const full = option.getAttribute('aria-label');
        const short = option.dataset.short;
        if (full && short) option.textContent = narrow.matches || presenting() ? short : full;
      }
      const chosen = select.selectedOptions[0];
      select.title = chosen?.getAttribute('aria-label') ?? chosen?.textContent ?? '';
    }
  };
  apply();
  narrow.addEventListener('change', apply);
  // The presenter view's one-row bar has no room for the full title either.
  new MutationObserver(apply).observe(document.documentElement, { attributes: true, attributeFilter: ['data-present'] });
  for (const select of selects) select.addEventListener('change', apply);
  // The page sets the select's value itself when the mode changes elsewhere (another tab, a reset).
  onPageModeChange(() => queueMicrotask(apply));
}
