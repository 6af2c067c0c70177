/**
 * The course's one reading order: the welcome page, then each lesson (by its `sidebar.order`)
 * followed by the labs it sends the learner to (its frontmatter `labs`) that no earlier lesson
 * has already sent them to. The sidebar, Previous/Next, the index pages and a lab page's links
 * back to its lesson and on to the next lab are all built from this list.
 */
import { LESSONS_PREFIX, pageConcepts, pageLabs, readDocPages, type DocPage } from './lessons.ts';

export interface CourseLesson {
  readonly kind: 'lesson';
  /** The lesson's slug: `services` for lessons/services.mdx. */
  readonly id: string;
  readonly href: string;
  readonly title: string;
  readonly description: string;
  /** The labs this lesson sends the learner to, in its frontmatter's order (some may sit under an earlier lesson). */
  readonly labs: readonly string[];
  /** The concept ids the lesson teaches (its frontmatter `concepts`). */
  readonly concepts: readonly string[];
  /** The words in the lesson's body, for a reading time. */
  readonly words: number;
}

interface CourseLab {
  readonly kind: 'lab';
  /** The lab's id (its folder under labs/). */
  readonly id: string;
  readonly href: string;
  /** The slug of the lesson it follows in the course: the first lesson that names it. */
  readonly lesson: string;
}

export type CourseEntry = CourseLesson | CourseLab;

/** Where the course starts (the welcome page), before the first lesson. */
export const COURSE_HOME = '/';

const lessonHref = (slug: string) => `/${LESSONS_PREFIX}${slug}/`;
const labHref = (id: string) => `/labs/${id}/`;

function sidebarOrder(page: DocPage): number {
  const sidebar = page.frontmatter.sidebar as { order?: unknown } | undefined;
  const order = sidebar?.order;
  if (typeof order !== 'number')
    throw new Error(`${page.file}: a lesson needs \`sidebar: { order: <number> }\` for its place in the course`);
  return order;
}

function text(page: DocPage, key: string): string {
  const value = page.frontmatter[key];
  if (typeof value !== 'string') throw new Error(`${page.file}: frontmatter \`${key}\` must be a string`);
  return value;
}

/** Lessons in order, each followed by the labs it is the first to name. */
export function courseOrder(pages: readonly DocPage[] = readDocPages()): CourseEntry[] {
  const lessons = pages
    .filter((p) => p.file.startsWith(LESSONS_PREFIX))
    .map((page) => ({ page, order: sidebarOrder(page) }))
    .sort((a, b) => a.order - b.order);
  const placed = new Set<string>();
  const out: CourseEntry[] = [];
  for (const { page } of lessons) {
    const id = page.file.slice(LESSONS_PREFIX.length).replace(/\.mdx$/, '');
    const labs = pageLabs(page);
    out.push({
      kind: 'lesson',
      id,
      href: lessonHref(id),
      title: text(page, 'title'),
      description: text(page, 'description'),
      labs,
      concepts: pageConcepts(page),
      words: page.body.split(/\s+/).filter(Boolean).length,
    });
    for (const lab of labs) {
      if (placed.has(lab)) continue;
      placed.add(lab);
      out.push({ kind: 'lab', id: lab, href: labHref(lab), lesson: id });
    }
  }
  return out;
}

/** Minutes to read a lesson at an unhurried 180 words a minute (code and tables read slower than prose). */
export function readingMinutes(lesson: Pick<CourseLesson, 'words'>): number {
  return Math.max(1, Math.round(lesson.words / 180));
}

/** The page before and after `href` on the course's path (the welcome page first); undefined off the path. */
export function neighbours(
  href: string,
  order: readonly CourseEntry[] = courseOrder(),
): { prev: string | null; next: string | null } | undefined {
  const path = [COURSE_HOME, ...order.map((e) => e.href)];
  const at = path.indexOf(href.endsWith('/') ? href : `${href}/`);
  if (at < 0) return undefined;
  return { prev: path[at - 1] ?? null, next: path[at + 1] ?? null };
}
