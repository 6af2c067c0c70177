/**
 * Starlight's search button is named "Search" by aria-label while it shows "Search Ctrl K", a
 * mismatch that trips up voice-control users (axe: label-content-name-mismatch). Name it by its
 * own visible word instead; the shortcut stays announced through aria-keyshortcuts. The word is
 * only visually hidden on small screens (see overrides/Search.astro), so the name never goes.
 */
function nameSearchButtons(root: ParentNode = document): void {
  for (const button of root.querySelectorAll<HTMLButtonElement>('button[data-open-modal]')) {
    button.querySelector(':scope > span[aria-hidden]')?.removeAttribute('aria-hidden');
    button.querySelectorAll(':scope > kbd').forEach((k) => k.setAttribute('aria-hidden', 'true'));
    button.removeAttribute('aria-label');
    button.classList.add('dplab-search-named');
  }
}

nameSearchButtons();

export {};
