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
