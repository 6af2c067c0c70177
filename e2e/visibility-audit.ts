/**
 * What a person sees cut off, measured in the page: the in-browser half of the visibility audit
 * (e2e/visibility.test.ts). Runs inside the page (page.evaluate), so it imports nothing and
 * everything it needs is in the one function.
 *
 * A finding is one of:
 * - `page scrolls sideways`: the document is wider than the window;
 * - `clipped`: an element whose content is wider (or taller) than its box, which cuts it off
 *   (overflow hidden/clip) instead of scrolling it;
 * - `outside`: text spilling past the side of its box (overflow visible), or an element sticking
 *   out of the nearest ancestor that clips it, or out of the window, sideways (inside a box that
 *   scrolls it is reachable, so that is fine);
 * - `no scrollbar`: a `pre` or diagram that scrolls sideways with its scrollbar hidden;
 * - `diagram too wide`: a drawn diagram that needs sideways scrolling in its column;
 * - `label too small`: a diagram label under 12 px on screen.
 */
/** The sizes and themes every audit looks at: a laptop and a phone, light and dark. */
export const AUDIT_VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;
export const AUDIT_SCHEMES = ['light', 'dark'] as const;

export interface Finding {
  what: 'page scrolls sideways' | 'clipped' | 'outside' | 'no scrollbar' | 'diagram too wide' | 'label too small';
  selector: string;
  /** Sizes in CSS pixels, as a person would check them in DevTools. */
  sizes: string;
}

/** Runs in the page: every finding on it as it is drawn now. */
export function auditPage(minLabelPx: number): Finding[] {
  const out: Finding[] = [];
  const px = (n: number) => Math.round(n * 10) / 10;
  const describe = (e: Element): string => {
    const parts: string[] = [];
    for (let n: Element | null = e; n && n !== document.body && parts.length < 4; n = n.parentElement) {
      const id = n.id ? `#${n.id}` : '';
      const cls = [...n.classList]
        .filter((c) => !c.startsWith('astro-'))
        .slice(0, 2)
        .map((c) => `.${c}`)
        .join('');
      const parent = n.parentElement;
      const nth = parent && !id ? [...parent.children].filter((c) => c.tagName === n!.tagName) : [];
      parts.unshift(`${n.tagName.toLowerCase()}${id}${cls}${nth.length > 1 ? `:nth-of-type(${nth.indexOf(n) + 1})` : ''}`);
      if (id) break;
    }
    const text = (e.textContent ?? '').trim().replace(/\s+/g, ' ').slice(0, 40);
    return `${parts.join(' > ')}${text ? ` "${text}"` : ''}`;
  };

  const root = document.documentElement;
  const viewportW = root.clientWidth;
  if (root.scrollWidth > viewportW + 1) {
    out.push({ what: 'page scrolls sideways', selector: 'html', sizes: `document ${root.scrollWidth} px wide, window ${viewportW} px` });
  }

  // Not for a person's eye, by design: screen-reader text, the terminal's own canvas and helpers
  // (their geometry has its own tests), skip links shown on focus.
  const ignored = (e: Element) => e.closest('.sr-only, .sl-sr-only, .xterm, [class*="skip-link"], template, noscript') !== null;
  const shown = (e: Element) => {
    if (e.getClientRects().length === 0) return false;
    const r = e.getBoundingClientRect();
    if (r.width <= 1 && r.height <= 1) return false;
    return getComputedStyle(e).visibility !== 'hidden';
  };
  const scrolls = (v: string) => v === 'auto' || v === 'scroll';
  /** How far the text a person sees in `box` reaches past its sides (text in a box that scrolls it is reachable). */
  const textSpill = (box: HTMLElement): number => {
    const r = box.getBoundingClientRect();
    const left = r.left + box.clientLeft;
    const right = left + box.clientWidth;
    let worst = 0;
    const walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let t = walk.nextNode(); t; t = walk.nextNode()) {
      const parent = t.parentElement;
      if (!parent || !(t.textContent ?? '').trim() || ignored(parent)) continue;
      let inner = false;
      for (let a: HTMLElement | null = parent; a && a !== box; a = a.parentElement)
        if (scrolls(getComputedStyle(a).overflowX)) inner = true;
      if (inner) continue;
      const range = document.createRange();
      range.selectNodeContents(t);
      for (const tr of range.getClientRects()) worst = Math.max(worst, tr.right - right, left - tr.left);
    }
    return worst;
  };
  const clips = (v: string) => v === 'hidden' || v === 'clip';

  const candidates = document.querySelectorAll(
    'pre, button, a, input, select, textarea, summary, p, li, h1, h2, h3, h4, h5, h6, td, th, dt, dd, label, figcaption, blockquote, .dplab-diagram-view',
  );
  for (const e of candidates) {
    if (ignored(e) || !shown(e)) continue;
    const s = getComputedStyle(e);
    const rect = e.getBoundingClientRect();
    const el = e as HTMLElement;
    const isBlock = s.display !== 'inline' && el.clientWidth > 0;
    // Its own content against its own box.
    if (isBlock) {
      const wide = el.scrollWidth > el.clientWidth + 1;
      const tall = el.scrollHeight > el.clientHeight + 1;
      // Ellipsis with the whole text on hover is a choice, not a cut.
      const ellipsis = s.textOverflow === 'ellipsis' && (el.title || '').trim().length > 0;
      if (wide && clips(s.overflowX) && !ellipsis) {
        out.push({
          what: 'clipped',
          selector: describe(e),
          sizes: `content ${el.scrollWidth} px wide in a ${el.clientWidth} px box (overflow-x: ${s.overflowX})`,
        });
      } else if (wide && s.overflowX === 'visible') {
        const spill = textSpill(el);
        if (spill > 1)
          out.push({ what: 'outside', selector: describe(e), sizes: `text ${px(spill)} px past the side of its ${el.clientWidth} px box` });
      }
      if (tall && clips(s.overflowY) && !ellipsis) {
        out.push({ what: 'clipped', selector: describe(e), sizes: `content ${el.scrollHeight} px tall in a ${el.clientHeight} px box` });
      }
      // Headless Chromium draws no scrollbars at all, so only a style that hides them is a finding.
      if (
        wide &&
        scrolls(s.overflowX) &&
        (e.tagName === 'PRE' || e.classList.contains('dplab-diagram-view')) &&
        s.scrollbarWidth === 'none'
      ) {
        out.push({
          what: 'no scrollbar',
          selector: describe(e),
          sizes: `content ${el.scrollWidth} px wide in a ${el.clientWidth} px box, scrollbar-width: none`,
        });
      }
    }
    // Its box against whatever clips it: the nearest ancestor that scrolls makes it reachable.
    let left = 0;
    let right = viewportW;
    let by = 'the window';
    for (let a = e.parentElement; a; a = a.parentElement) {
      const as = getComputedStyle(a);
      if (scrolls(as.overflowX)) {
        left = -Infinity;
        right = Infinity;
        break;
      }
      if (clips(as.overflowX) && a !== root && a !== document.body) {
        const ar = a.getBoundingClientRect();
        left = ar.left + a.clientLeft;
        right = left + a.clientWidth;
        by = describe(a).replace(/ ".*$/, '');
        break;
      }
    }
    if (rect.left < left - 1 || rect.right > right + 1) {
      out.push({
        what: 'outside',
        selector: describe(e),
        sizes: `box ${px(rect.left)}–${px(rect.right)} px, ${by} ${px(left)}–${px(right)} px`,
      });
    }
  }

  for (const view of document.querySelectorAll<HTMLElement>('.dplab-diagram-view')) {
    const svg = [...view.querySelectorAll('svg')].find((x) => x.getClientRects().length > 0);
    if (!svg || !shown(view)) continue;
    if (view.scrollWidth > view.clientWidth + 1) {
      out.push({
        what: 'diagram too wide',
        selector: describe(view.parentElement ?? view),
        sizes: `drawing ${view.scrollWidth} px wide in a ${view.clientWidth} px column`,
      });
    }
    const vb = svg.viewBox.baseVal;
    const scale = vb && vb.width ? svg.getBoundingClientRect().width / vb.width : 1;
    const sizes = [...svg.querySelectorAll('.nodeLabel, .edgeLabel, text')]
      .filter((l) => (l.textContent ?? '').trim())
      .map((l) => parseFloat(getComputedStyle(l).fontSize) * scale);
    const min = Math.min(...sizes);
    if (sizes.length && min < minLabelPx - 0.01) {
      out.push({ what: 'label too small', selector: describe(view.parentElement ?? view), sizes: `smallest label ${px(min)} px` });
    }
  }
  return out;
}
