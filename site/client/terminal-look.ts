/** How every xterm.js terminal on the site looks: the learner's shells and the read-only mirror. */
/** A little air between rows: at 1.0 the DOM renderer clips underscores (`snake_case` read `snake case`). */
export const LINE_HEIGHT = 1.2;
export const FONT_FAMILY = 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
export const THEME = {
  background: '#0d1117',
  foreground: '#e6edf3',
  cursor: '#e6edf3',
  selectionBackground: '#264f78',
};
