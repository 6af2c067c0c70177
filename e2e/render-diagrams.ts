/**
 * `npm run diagrams`: draws every lesson diagram to SVG in both colour schemes, in Debian's
 * Chromium with the project's own mermaid (mermaid measures text, so it needs a real browser),
 * and writes them to site/diagrams/<hash>.<theme>.svg with a header naming the lesson and the
 * source hash; drawings no lesson uses any more are removed. Commit the folder: the build and
 * `npm start` read the drawings and never need Chromium. Already drawn sources are skipped
 * (`--all` draws everything again).
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { launchBrowser } from './harness.ts';
import { projectRoot } from '../scripts/base/paths.ts';
import {
  DIAGRAM_THEMES,
  DIAGRAMS_DIR,
  RENDER_SETTINGS,
  lessonDiagrams,
  svgFileName,
  svgHeader,
  type DiagramTheme,
} from '../scripts/catalogue/diagrams.ts';

const all = process.argv.includes('--all');
const diagrams = lessonDiagrams();
mkdirSync(DIAGRAMS_DIR, { recursive: true });
const wanted = new Set(diagrams.flatMap((d) => DIAGRAM_THEMES.map((t) => svgFileName(d.hash, t))));
const todo = diagrams.flatMap((d) =>
  DIAGRAM_THEMES.filter((t) => all || !existsSync(join(DIAGRAMS_DIR, svgFileName(d.hash, t)))).map((theme) => ({ d, theme })),
);

if (todo.length) {
  const mermaidJs = createRequire(import.meta.url).resolve('mermaid/dist/mermaid.min.js');
  const browser = await launchBrowser();
  try {
    const { page } = browser;
    await page.setContent('<!doctype html><html><body></body></html>');
    await page.addScriptTag({ path: mermaidJs });
    for (const { d, theme } of todo) {
      const svg = await page.evaluate(
        async ({ code, id, settings }) => {
          const mermaid = (globalThis as unknown as { mermaid: typeof import('mermaid').default }).mermaid;
          mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', ...settings });
          return (await mermaid.render(id, code)).svg;
        },
        {
          code: d.code,
          id: `dplab-diagram-${d.hash}-${theme}`,
          settings: { ...RENDER_SETTINGS.layout, ...RENDER_SETTINGS.themes[theme as DiagramTheme] },
        },
      );
      // Which colour scheme a drawing is for: the page's CSS shows one of the two.
      const tagged = svg.replace(/^<svg\b/, `<svg data-scheme="${theme}"`);
      if (tagged === svg) throw new Error(`${d.file} diagram ${d.index}: mermaid returned no <svg> element.`);
      writeFileSync(join(DIAGRAMS_DIR, svgFileName(d.hash, theme)), `${svgHeader(d, theme)}\n${tagged}\n`);
      console.log(`drew ${d.file} diagram ${d.index} (${theme})`);
    }
  } finally {
    await browser.close();
  }
}
for (const f of readdirSync(DIAGRAMS_DIR)) {
  if (f.endsWith('.svg') && !wanted.has(f)) {
    rmSync(join(DIAGRAMS_DIR, f));
    console.log(`removed ${f} (no lesson draws it any more)`);
  }
}
console.log(`${diagrams.length} diagrams, ${todo.length} drawings made, in ${relative(projectRoot, DIAGRAMS_DIR)}/`);
