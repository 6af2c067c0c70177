/**
 * The committed drawings are in step with the lessons: every diagram has a drawing per colour
 * scheme made from its current source (by the hash in the drawing's header), and no drawing is
 * left that no lesson uses. No browser needed: a changed source changes the hash.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DIAGRAM_THEMES,
  DIAGRAMS_DIR,
  diagramHash,
  diagramsInLesson,
  headerHash,
  lessonDiagrams,
  readDiagramSvg,
  svgFileName,
} from './diagrams.ts';

describe('lesson diagrams drawn ahead of time', () => {
  const diagrams = lessonDiagrams();

  it('finds the lessons’ diagrams', () => {
    expect(diagrams.length).toBeGreaterThan(5);
    for (const d of diagrams) expect(d.code).toMatch(/^(flowchart|graph|sequenceDiagram|stateDiagram|classDiagram)/);
  });

  it('every diagram has a drawing per colour scheme, made from its current source', () => {
    const stale: string[] = [];
    for (const d of diagrams) {
      for (const theme of DIAGRAM_THEMES) {
        let text: string;
        try {
          text = readFileSync(join(DIAGRAMS_DIR, svgFileName(d.hash, theme)), 'utf8');
        } catch {
          stale.push(`${d.file} diagram ${d.index} (${theme}): no drawing`);
          continue;
        }
        if (headerHash(text) !== d.hash) stale.push(`${d.file} diagram ${d.index} (${theme}): header says ${headerHash(text)}`);
        else expect(text).toContain(`<svg data-scheme="${theme}"`);
      }
    }
    expect(stale, 'run `npm run diagrams` and commit site/diagrams/').toEqual([]);
  });

  it('no drawing is left that no lesson uses', () => {
    const wanted = new Set(diagrams.flatMap((d) => DIAGRAM_THEMES.map((t) => svgFileName(d.hash, t))));
    expect(readdirSync(DIAGRAMS_DIR).filter((f) => !wanted.has(f))).toEqual([]);
  });

  it('a changed source has no drawing, and the build says how to make one', () => {
    const [first] = diagrams;
    const edited = `${first.code}\n  X --> Y`;
    expect(diagramHash(edited)).not.toBe(first.hash);
    expect(() => readDiagramSvg(edited, 'light')).toThrow(/npm run diagrams/);
    expect(readDiagramSvg(first.code, 'dark')).toContain('data-scheme="dark"');
  });

  it('reads sources as the component gets them, and refuses what it cannot read exactly', () => {
    const mdx = 'x\n<Diagram\n  label="A to B"\n  code={`flowchart LR\n  A --> B\n`}\n/>\n<Diagram code={`graph TD\n a`} />';
    const found = diagramsInLesson(mdx, 'l.mdx');
    expect(found.map((d) => [d.index, d.label, d.code])).toEqual([
      [1, 'A to B', 'flowchart LR\nA --> B'],
      [2, 'Diagram', 'graph TD\na'],
    ]);
    // MDX hands the component the source without its indentation: the same drawing.
    expect(diagramHash('flowchart LR\n  A --> B\n')).toBe(diagramHash('flowchart LR\nA --> B'));
    expect(() => diagramsInLesson('<Diagram code={`graph TD\n a["${x}"]`} />', 'l.mdx')).toThrow(/l.mdx: diagram 1/);
    expect(() => diagramsInLesson('<Diagram label="no code" />', 'l.mdx')).toThrow(/no code=/);
  });
});
