/**
 * Pagefind's search UI, loaded when the reader first reaches for the search instead of with
 * every page. Starlight's search constructs `new PagefindUI(options)` as soon as a page is idle,
 * which fetched ~27 KB (gzip) of JavaScript on every page, lessons and labs alike; the site's
 * build (astro.config.mjs, searchOnDemand) hands Starlight this class instead. It keeps the
 * options and builds the real UI when the search dialog first opens (button, Ctrl+K) or the
 * pointer or focus reaches the search button, whichever comes first; then the field gets focus.
 */
type Options = { element: string } & Record<string, unknown>;

export class PagefindUI {
  constructor(options: Options) {
    const host = document.querySelector(options.element);
    const dialog = host?.closest('dialog');
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      watch.disconnect();
      // @ts-expect-error: Pagefind ships no type declarations.
      void import('@pagefind/default-ui').then(({ PagefindUI: Real }: { PagefindUI: new (o: Options) => unknown }) => {
        new Real(options);
        if (dialog?.open) host?.querySelector<HTMLInputElement>('input')?.focus();
      });
    };
    const watch = new MutationObserver(() => dialog?.open && start());
    if (!dialog) {
      start();
      return;
    }
    watch.observe(dialog, { attributes: true, attributeFilter: ['open'] });
    for (const button of document.querySelectorAll('button[data-open-modal]')) {
      for (const type of ['pointerenter', 'focus', 'touchstart'] as const)
        button.addEventListener(type, start, { once: true, passive: true });
    }
  }
}
