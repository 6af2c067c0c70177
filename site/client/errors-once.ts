/**
 * On a page with several cluster panels (/clusters/), one problem that stops every cluster (no
 * Docker) is said once: the first panel shows the error with its fix, each later panel whose
 * error has the same fix (its `data-problem`; the messages differ, each naming its own mode, as
 * "Cannot start the ipvs cluster: …") shows one line that points to it. Panels redraw
 * themselves, so this runs again after each redraw.
 */
const ERROR = '.dplab-cp-error';
const SAME = 'dplab-cp-same';

export function sayErrorsOnce(root: HTMLElement): void {
  const apply = () => {
    root.querySelectorAll(`.${SAME}`).forEach((n) => n.remove());
    const first = new Map<string, HTMLElement>();
    for (const error of root.querySelectorAll<HTMLElement>(ERROR)) {
      const text = error.dataset.problem ?? error.textContent ?? '';
      const shown = first.get(text);
      error.hidden = shown !== undefined;
      if (!shown) {
        first.set(text, error);
        continue;
      }
      const title = shown.closest<HTMLElement>('dplab-cluster-panel')?.dataset.title ?? 'the first cluster';
      const note = document.createElement('p');
      note.className = SAME;
      note.textContent = `The same problem as in the first panel (${title}): its fix applies here too.`;
      error.before(note);
    }
  };
  const observer = new MutationObserver(() => {
    observer.disconnect();
    apply();
    observer.observe(root, { childList: true, subtree: true });
  });
  apply();
  observer.observe(root, { childList: true, subtree: true });
}
