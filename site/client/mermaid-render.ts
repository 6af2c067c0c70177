/**
 * mermaid in the browser, for diagrams drawn from live data (the dataplane explorer). Lesson
 * diagrams are drawn ahead of time (scripts/catalogue/diagrams.ts) and never load this. mermaid
 * is imported on first use, so it is a chunk only a page that draws one fetches.
 */
import { MERMAID_LAYOUT, MERMAID_THEMES, type DiagramTheme } from './mermaid-theme.ts';

let counter = 0;

/** The page's colour scheme, as the diagrams name it. */
export function diagramTheme(): DiagramTheme {
  return document.documentElement.dataset.theme === 'light' ? 'light' : 'dark';
}

/** SVG text for `source` in the page's colour scheme, importing mermaid on first use. Throws on bad source. */
export async function renderMermaid(source: string): Promise<string> {
  const { default: mermaid } = await import('mermaid');
  const scheme = diagramTheme();
  mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', ...MERMAID_LAYOUT, ...MERMAID_THEMES[scheme] });
  const { svg } = await mermaid.render(`dplab-mermaid-${++counter}`, source);
  return svg;
}
