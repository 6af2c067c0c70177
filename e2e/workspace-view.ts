/**
 * What the browser tests measure on a workspace page: the terminal's geometry as a learner sees
 * it, and screenshots a person can open (test-results/screenshots/, printed once per run).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { projectRoot } from '../scripts/base/paths.ts';

export const SCREENSHOT_DIR = join(projectRoot, 'test-results', 'screenshots');
let announced = false;

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path });
  if (!announced) {
    announced = true;
    console.log(`[e2e] screenshots of the workspace: ${SCREENSHOT_DIR}`);
  }
  return path;
}

export interface TerminalGeometry {
  cols: number;
  rows: number;
  /** The terminal's visible box (it clips its content). */
  box: { top: number; bottom: number; left: number; right: number };
  /** Height of each rendered row, and the distance from one row's top to the next. */
  rowHeights: number[];
  rowSteps: number[];
  /** Cell height xterm computed for its grid. */
  cellHeight: number;
  /** Rows whose text matches, with their boxes. */
  found: { text: string; top: number; bottom: number }[];
  page: { scrollWidth: number; clientWidth: number };
}

/** Geometry of the first terminal (or the one matching `selector`), with the rows whose text matches `wanted`. */
export async function terminalGeometry(page: Page, wanted: string[], selector = 'dplab-terminal:not([node])'): Promise<TerminalGeometry> {
  return page.evaluate(
    ({ wanted, selector }) => {
      const t = document.querySelector<HTMLElement>(selector)!;
      const b = t.getBoundingClientRect();
      const rows = [...t.querySelectorAll<HTMLElement>('.xterm-rows > div')];
      const rects = rows.map((r) => r.getBoundingClientRect());
      const screen = t.querySelector<HTMLElement>('.xterm-screen')!.getBoundingClientRect();
      const found = wanted.flatMap((w) =>
        rows
          .map((r, i) => ({ text: (r.textContent ?? '').replace(/\u00a0/g, ' ').trimEnd(), top: rects[i].top, bottom: rects[i].bottom }))
          .filter((r) => (w.startsWith('^') ? new RegExp(w).test(r.text) : r.text === w))
          .slice(-1),
      );
      return {
        cols: Number(t.dataset.cols),
        rows: Number(t.dataset.rows),
        box: { top: b.top, bottom: b.bottom, left: b.left, right: b.right },
        rowHeights: rects.map((r) => r.height),
        rowSteps: rects.slice(1).map((r, i) => r.top - rects[i].top),
        cellHeight: screen.height / rows.length,
        found,
        page: { scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth },
      };
    },
    { wanted, selector },
  );
}

/**
 * A terminal read from its xterm buffer (scrollback and screen): its columns, its lines
 * (trimmed), and every place where xterm broke a line at the last column between two characters
 * that are not spaces, inside a word (text the page wrote at word boundaries has none).
 */
export async function terminalText(
  page: Page,
  selector = 'dplab-terminal:not([node])',
): Promise<{ cols: number; lines: { text: string; wrapped: boolean }[]; midWord: string[] }> {
  return page.evaluate((selector) => {
    const t = document.querySelector<HTMLElement & { bufferLines(): { text: string; wrapped: boolean }[] }>(selector)!;
    const lines = t.bufferLines();
    return {
      cols: Number(t.dataset.cols),
      lines: lines.map((l) => ({ text: l.text.trimEnd(), wrapped: l.wrapped })),
      midWord: lines.flatMap((l, i) =>
        i > 0 && l.wrapped && /\S$/.test(lines[i - 1].text) && /^\S/.test(l.text)
          ? [`${lines[i - 1].text.trimEnd()}|${l.text.trimEnd()}`]
          : [],
      ),
    };
  }, selector);
}

export interface BarLayout {
  /** The bar's height in px. */
  height: number;
  /** The bar's pieces, line by line, left to right (a piece whose middle is within a line's first piece's height is on that line). */
  lines: string[][];
  /** Pieces whose own text runs over more than one line. */
  wrapped: string[];
  /** The learner's shell: its rows, and whether its box ends inside the viewport. */
  terminalRows: number;
  terminalInView: boolean;
  /** Height of one terminal row in px (the monospace font's line height × 1.2). */
  terminalCell: number;
}

/** The pieces of a workspace's top bar a learner sees side by side. */
const BAR_PIECES: [string, string][] = [
  ['.dplab-ws-title', 'title'],
  ['.dplab-mode-picker', 'mode'],
  ['.dplab-cp-badge', 'state'],
  ['.dplab-cp-steps-toggle', 'steps'],
  ['.dplab-cp-progress', 'provisioning'],
  ['.dplab-cp-error', 'error'],
  ['.dplab-cp-offline', 'offline'],
  ['.dplab-cp-meta', 'nodes'],
  ['.dplab-cp-actions', 'start/delete'],
  ['.dplab-setup', 'setup'],
  ['.dplab-progress-steps', 'steps done'],
  ['.dplab-progress-actions', 'reset/present'],
  ['.dplab-font-controls', 'text size'],
];

/** How the workspace's top bar is laid out, and what it leaves the terminal. */
export async function barLayout(page: Page): Promise<BarLayout> {
  return page.evaluate((pieces) => {
    const bar = document.querySelector<HTMLElement>('.dplab-ws-bar')!;
    const shown = pieces
      .flatMap(([sel, name]) =>
        [...bar.querySelectorAll<HTMLElement>(sel)]
          .filter((e) => e.checkVisibility() && e.getBoundingClientRect().height > 0)
          .map((e) => ({ e, name, r: e.getBoundingClientRect() })),
      )
      .sort((a, b) => a.r.top - b.r.top || a.r.left - b.r.left);
    const lines: { top: number; bottom: number; names: { name: string; left: number }[] }[] = [];
    for (const p of shown) {
      const mid = (p.r.top + p.r.bottom) / 2;
      const line = lines.find((l) => mid > l.top && mid < l.bottom);
      if (line) line.names.push({ name: p.name, left: p.r.left });
      else lines.push({ top: p.r.top, bottom: p.r.bottom, names: [{ name: p.name, left: p.r.left }] });
    }
    // The lines a piece's text is set on: its text boxes, by their middles.
    const textLines = (e: HTMLElement) => {
      const mids: number[] = [];
      const walker = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        if (!n.textContent?.trim() || !n.parentElement?.checkVisibility() || n.parentElement.closest('.sr-only')) continue;
        const range = document.createRange();
        range.selectNodeContents(n);
        for (const r of range.getClientRects()) {
          if (r.width < 1) continue;
          const mid = (r.top + r.bottom) / 2;
          if (!mids.some((m) => Math.abs(m - mid) < r.height / 2)) mids.push(mid);
        }
      }
      return mids.length;
    };
    const term = document.querySelector<HTMLElement>('dplab-terminal:not([node])')!;
    return {
      height: Math.round(bar.getBoundingClientRect().height),
      lines: lines.map((l) => l.names.sort((a, b) => a.left - b.left).map((n) => n.name)),
      wrapped: shown.filter((p) => textLines(p.e) > 1).map((p) => p.name),
      terminalRows: Number(term.dataset.rows),
      terminalInView: term.getBoundingClientRect().bottom <= innerHeight + 0.5,
      terminalCell: (term.querySelector('.xterm-screen')?.getBoundingClientRect().height ?? 0) / Number(term.dataset.rows),
    };
  }, BAR_PIECES);
}
