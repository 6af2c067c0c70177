/**
 * The level a heading drawn at `node` takes so the page's outline stays in order: one below the
 * last heading before it (h2 under the page's h1, h4 under a lab step's h3), at most h6.
 */
export type HeadingTag = 'h2' | 'h3' | 'h4' | 'h5' | 'h6';

export function headingLevelAt(node: Node): number {
  let last = 1;
  for (const h of document.querySelectorAll('h1, h2, h3, h4, h5, h6'))
    if (!node.contains(h) && h.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_FOLLOWING) last = Number(h.tagName[1]);
  return Math.min(6, last + 1);
}

/** The tag of a heading at `level`, kept within h2–h6. */
export function headingTag(level: number): HeadingTag {
  return `h${Math.max(2, Math.min(6, level))}` as HeadingTag;
}
