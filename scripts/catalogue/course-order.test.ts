/** The course's one order: lesson → its labs → next lesson, every lab once. */
import { describe, expect, it } from 'vitest';
import { loadLabs } from '../labs/registry.ts';
import { courseOrder, neighbours, readingMinutes, type CourseEntry } from './course-order.ts';
import { LESSONS_PREFIX, pageLabs, readDocPages, type DocPage } from './lessons.ts';

const lesson = (slug: string, order: number | undefined, labs: string[]): DocPage => ({
  file: `lessons/${slug}.mdx`,
  frontmatter: { title: slug, description: `about ${slug}`, labs, ...(order === undefined ? {} : { sidebar: { order } }) },
  body: 'one two three',
});
const hrefs = (order: CourseEntry[]) => order.map((e) => e.href);

describe('courseOrder', () => {
  it('puts each lesson, by its sidebar order, before the labs it is the first to name', () => {
    const order = courseOrder([
      lesson('b', 2, ['x', 'z']),
      { file: 'index.mdx', frontmatter: { title: 'home' }, body: '' },
      lesson('a', 1, ['x', 'y']),
      lesson('c', 3, ['y']),
    ]);
    expect(hrefs(order)).toEqual(['/lessons/a/', '/labs/x/', '/labs/y/', '/lessons/b/', '/labs/z/', '/lessons/c/']);
    expect(order.find((e) => e.id === 'z')).toMatchObject({ kind: 'lab', lesson: 'b' });
    // A lesson still lists every lab it names, those placed under an earlier lesson too.
    expect(order.find((e) => e.id === 'b')).toMatchObject({ kind: 'lesson', labs: ['x', 'z'] });
  });

  it('refuses a lesson without a place in the course', () => {
    expect(() => courseOrder([lesson('a', undefined, [])])).toThrow('lessons/a.mdx: a lesson needs `sidebar: { order: <number> }`');
  });

  it('places every lab of labs/index.ts exactly once, after a lesson that names it, starting with the first lesson', () => {
    const order = courseOrder();
    const labs = order.filter((e) => e.kind === 'lab').map((e) => e.id);
    expect([...labs].sort()).toEqual(
      loadLabs()
        .map((l) => l.id)
        .sort(),
    );
    expect(order[0]).toMatchObject({ kind: 'lesson', id: 'services' });
    expect(hrefs(order).slice(0, 3)).toEqual(['/lessons/services/', '/labs/first-service/', '/labs/proxy-mode-rules/']);
    let current: CourseEntry | undefined;
    for (const e of order) {
      if (e.kind === 'lesson') current = e;
      else expect(current?.kind === 'lesson' && current.labs, `${e.id} follows ${current?.id}`).toContain(e.id);
    }
  });
});

describe('neighbours', () => {
  const order = courseOrder([lesson('a', 1, ['x']), lesson('b', 2, [])]);
  it('runs from the welcome page through the course, and is undefined off it', () => {
    expect(neighbours('/', order)).toEqual({ prev: null, next: '/lessons/a/' });
    expect(neighbours('/labs/x', order)).toEqual({ prev: '/lessons/a/', next: '/lessons/b/' });
    expect(neighbours('/lessons/b/', order)).toEqual({ prev: '/labs/x/', next: null });
    expect(neighbours('/terminal/', order)).toBeUndefined();
  });
});

it('reads about 180 words a minute, never less than a minute', () => {
  expect(readingMinutes({ words: 1800 })).toBe(10);
  expect(readingMinutes({ words: 20 })).toBe(1);
});

describe("a lesson's Labs section", () => {
  const lessons = readDocPages().filter((p) => p.file.startsWith(LESSONS_PREFIX) && pageLabs(p).length > 0);

  it('there are lessons that send the learner to labs', () => expect(lessons.length).toBeGreaterThan(5));

  it.each(lessons.map((p) => [p.file, p] as const))('%s: drawn from the course order, no lab named by hand', (_file, page) => {
    const section = /\n## Labs\n([\s\S]*?)(?=\n## |$)/.exec(page.body)?.[1];
    expect(section, 'a "## Labs" section').toBeDefined();
    // <LessonLabs> names each lab of the frontmatter by its title; a link of the lesson's own would drift.
    expect(section).toMatch(/<LessonLabs\b/);
    expect(section).not.toMatch(/\]\(\/labs\//);
    // A note is for a lab the lesson names (the component also fails the build on this).
    const noted = [...(section ?? '').matchAll(/^\s+'([a-z0-9-]+)':/gm)].map((m) => m[1]);
    for (const id of noted) expect(pageLabs(page), `note for ${id}`).toContain(id);
  });
});
