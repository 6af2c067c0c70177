/**
 * Lesson coverage: every syllabus concept is taught by some lesson, lessons name only known
 * concepts, and every lesson has the parts a learner relies on (a diagram, a recap).
 * The lab side (every **lab** concept practised by a checked step) reuses `lessonConcepts`.
 */
import { describe, expect, it } from 'vitest';
import { CONCEPTS, SECTIONS, isConceptId } from './concepts.ts';
import { lessonDiagrams } from './diagrams.ts';
import { LESSONS_PREFIX, lessonConcepts, pageConcepts, pageLabs, readDocPages } from './lessons.ts';

const pages = readDocPages();
const lessons = pages.filter((p) => p.file.startsWith(LESSONS_PREFIX));

describe('the concept list', () => {
  it('has unique ids whose letter is their section', () => {
    const ids = CONCEPTS.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const c of CONCEPTS) {
      expect(c.id, `${c.id} is not a syllabus-style id`).toMatch(/^[SIVNETC]\d+$/);
      expect(c.id[0], `${c.id} is filed under section ${c.section}`).toBe(c.section);
      expect(SECTIONS[c.section]).toBeTruthy();
    }
  });
});

describe('lesson coverage', () => {
  it('finds lessons', () => {
    expect(lessons.length).toBeGreaterThan(0);
  });

  it('teaches every concept in some lesson', () => {
    const missing = [...lessonConcepts(pages)].filter(([, files]) => files.length === 0).map(([id]) => id);
    expect(missing, `concepts no page teaches: ${missing.join(', ')}`).toEqual([]);
  });

  it('names only known concept ids', () => {
    const unknown = pages.flatMap((p) =>
      pageConcepts(p)
        .filter((id) => !isConceptId(id))
        .map((id) => `${p.file}: ${id}`),
    );
    expect(unknown, `unknown concept ids: ${unknown.join('; ')}`).toEqual([]);
  });
});

describe.each(lessons.map((l) => [l.file, l] as const))('lesson %s', (_file, lesson) => {
  it('names at least one concept, each once', () => {
    const ids = pageConcepts(lesson);
    expect(ids.length, 'frontmatter `concepts` is empty').toBeGreaterThan(0);
    expect(new Set(ids).size, 'frontmatter `concepts` repeats an id').toBe(ids.length);
  });

  it('has a sidebar order', () => {
    const sidebar = lesson.frontmatter.sidebar as { order?: unknown } | undefined;
    expect(typeof sidebar?.order, 'frontmatter needs `sidebar: { order: N }`').toBe('number');
  });

  it('draws at least one diagram with the Diagram component', () => {
    expect(lesson.body, 'no <Diagram …/> in the lesson').toMatch(/<Diagram\b/);
    expect(lesson.body, '<Diagram> is used but not imported').toMatch(/^import Diagram from ['"][./]+components\/Diagram\.astro['"];?$/m);
  });

  it('ends with a Recap section', () => {
    expect(lesson.body, 'no "## Recap" heading').toMatch(/^## Recap\s*$/m);
  });

  it('lists in `labs` exactly the labs it links to', () => {
    // <LessonLabs> (its "Labs" section) links every lab of `labs`; other links are the lesson's own.
    const drawn = /<LessonLabs\b/.test(lesson.body) ? pageLabs(lesson) : [];
    const linked = [...new Set([...drawn, ...[...lesson.body.matchAll(/\/labs\/([a-z0-9-]+)\//g)].map((m) => m[1]!)])].sort();
    const listed = [...new Set(pageLabs(lesson))].sort();
    expect(linked, 'links to /labs/<id>/ and frontmatter `labs` disagree').toEqual(listed);
  });
});

/** The mermaid source of every `<Diagram code={`…`} />` in a page body. */

describe('diagrams', () => {
  const diagrams = lessonDiagrams(pages).map((d) => [`${d.file} #${d.index}`, d.code] as const);

  it('are written as template literals the test can read', () => {
    const tags = lessons.reduce((n, l) => n + [...l.body.matchAll(/<Diagram\b/g)].length, 0);
    expect(diagrams.length, 'a <Diagram> whose code is not a plain template literal').toBe(tags);
  });

  it.each(diagrams)('%s parses with mermaid', async (_name, code) => {
    expect(code, 'template interpolation in diagram source').not.toContain('${');
    const mermaid = await loadMermaid();
    await expect(mermaid.parse(code)).resolves.toBeTruthy();
  });
});

let mermaidPromise: Promise<{ parse(code: string): Promise<unknown> }> | undefined;

/**
 * mermaid in Node, for parsing only. mermaid registers DOMPurify hooks when it loads; outside a
 * browser DOMPurify has no DOM and leaves those functions out, so give it no-op stand-ins first.
 * Parsing never sanitises or renders, so the stand-ins are never asked to do real work.
 */
function loadMermaid() {
  mermaidPromise ??= (async () => {
    const purify = (await import('dompurify')).default as unknown as Record<string, unknown>;
    for (const fn of ['addHook', 'removeHook', 'removeHooks', 'removeAllHooks']) purify[fn] ??= () => {};
    purify.sanitize ??= (dirty: unknown) => dirty;
    const { default: mermaid } = await import('mermaid');
    mermaid.initialize({ startOnLoad: false });
    return mermaid;
  })();
  return mermaidPromise;
}

describe('lesson order', () => {
  it('gives every lesson its own sidebar position', () => {
    const orders = lessons.map((l) => (l.frontmatter.sidebar as { order?: number } | undefined)?.order);
    expect(new Set(orders).size).toBe(orders.length);
  });
});

describe('install commands a learner copies', () => {
  // Issue 24: an unpinned `cilium install` or `helm install` gets whatever Cilium is newest.
  it('pin the Cilium the provisioner installs', () => {
    const installs = pages.flatMap((p) =>
      p.body
        .split('\n')
        .filter((l) => /\b(cilium install|helm (install|upgrade) cilium)\b/.test(l) && !/^\s*(\/\/|#)/.test(l))
        .map((line) => ({ file: p.file, line })),
    );
    expect(installs.length).toBeGreaterThan(0);
    for (const { file, line } of installs)
      expect(line, `${file}: ${line.trim()}`).toMatch(/--version (\$\{CILIUM_VERSION\}|\d+\.\d+\.\d+)/);
  });
});
