/**
 * Our messages as DOM, never as HTML strings: `code` spans become <code>, and web addresses
 * become links (a fix that says "install kind: https://…" should be one click away).
 */
const URL_RE = /(https?:\/\/[^\s<>"'`]+[^\s<>"'`.,;:!?)])/;

function withLinks(text: string, into: DocumentFragment): void {
  text.split(URL_RE).forEach((part, i) => {
    if (!part) return;
    if (i % 2 === 1) {
      const a = document.createElement('a');
      a.href = part;
      a.textContent = part;
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
      into.append(a);
    } else into.append(part);
  });
}

export function richText(text: string): DocumentFragment {
  const frag = document.createDocumentFragment();
  text.split(/(`[^`]+`)/).forEach((part) => {
    if (part.startsWith('`') && part.endsWith('`') && part.length > 1) {
      const c = document.createElement('code');
      c.textContent = part.slice(1, -1);
      frag.append(c);
    } else if (part) withLinks(part, frag);
  });
  return frag;
}
