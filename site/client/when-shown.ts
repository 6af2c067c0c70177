/**
 * Runs `load` once, the first time `target` is on screen: the code of a view the reader may
 * never open (the dataplane tab of a lab page) is fetched when it is shown, not with the page.
 * A view already on screen (the explorer page) loads at once.
 */
export function whenShown(target: Element, load: () => unknown): void {
  if (typeof IntersectionObserver === 'undefined') {
    load();
    return;
  }
  const seen = new IntersectionObserver((entries) => {
    if (!entries.some((e) => e.isIntersecting)) return;
    seen.disconnect();
    load();
  });
  seen.observe(target);
}
