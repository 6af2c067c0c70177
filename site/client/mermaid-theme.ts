/**
 * How mermaid draws in each of the site's colour schemes (Starlight's `data-theme`). One copy
 * for both places a diagram is drawn: ahead of time for the lessons (e2e/render-diagrams.ts)
 * and in the browser for the explorer's live diagrams (mermaid-render.ts). Pure data.
 */
export const DIAGRAM_THEMES = ['light', 'dark'] as const;
export type DiagramTheme = (typeof DIAGRAM_THEMES)[number];

export const MERMAID_THEMES = {
  light: { theme: 'default', themeVariables: { edgeLabelBackground: '#ffffff' } },
  // mermaid's dark theme puts edge labels in grey on a grey box (contrast below 4.5:1).
  dark: { theme: 'dark', themeVariables: { edgeLabelBackground: '#1f2430', labelTextColor: '#e6edf3', textColor: '#e6edf3' } },
} as const satisfies Record<DiagramTheme, { theme: string; themeVariables: Record<string, string> }>;

/**
 * Tighter than mermaid's defaults (50 px between boxes, 15 px inside them), so a diagram drawn
 * top to bottom fits a phone's column with its labels at 12 px or more (diagram-view.ts).
 */
export const MERMAID_LAYOUT = {
  flowchart: { nodeSpacing: 20, rankSpacing: 32, padding: 6, diagramPadding: 8, subGraphTitleMargin: { top: 4, bottom: 10 } },
  sequence: { actorMargin: 16, width: 120, boxMargin: 6, noteMargin: 6, messageMargin: 30, diagramMarginX: 4 },
} as const;

/**
 * A traced request's path on the explorer's diagram (trace-diagram.ts): a border and lines that
 * stand apart from each theme's own (and from its blue), and the chosen backends filled, their
 * text at 4.5:1 or more on that fill.
 */
export const TRACE_COLOURS = {
  light: { stroke: '#c2410c', chosenFill: '#ffedd5', chosenText: '#1c1917' },
  dark: { stroke: '#fb923c', chosenFill: '#4a2410', chosenText: '#fafaf9' },
} as const satisfies Record<DiagramTheme, { stroke: string; chosenFill: string; chosenText: string }>;
