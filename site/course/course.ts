/**
 * The course order (scripts/catalogue/course-order.ts) with each lab's title and data from the
 * lab registry: what the sidebar, Previous/Next, the index pages and the lab pages draw from.
 */
import { COURSE_HOME, courseOrder, neighbours, type CourseEntry, type CourseLesson } from '../../scripts/catalogue/course-order.ts';
import { loadLabs } from '../../scripts/labs/registry.ts';
import type { Lab } from '../../scripts/labs/schema.ts';
import { CONCEPTS } from '../../scripts/catalogue/concepts.ts';

export interface CourseLink {
  readonly href: string;
  readonly label: string;
  readonly kind: 'home' | 'lesson' | 'lab';
}

const HOME: CourseLink = { href: COURSE_HOME, label: 'Welcome', kind: 'home' };

let cached: CourseEntry[] | undefined;
/** The course order, read once per build. */
export function course(): CourseEntry[] {
  cached ??= courseOrder();
  return cached;
}

export function courseLessons(): CourseLesson[] {
  return course().filter((e): e is CourseLesson => e.kind === 'lesson');
}

export function labById(id: string): Lab {
  const lab = loadLabs().find((l) => l.id === id);
  if (!lab) throw new Error(`A lesson names lab "${id}", which is not in labs/index.ts`);
  return lab;
}

/** Every labs the course places, in course order, with its lesson. */
export function courseLabs(): { lab: Lab; lesson: CourseLesson }[] {
  const lessons = courseLessons();
  return course().flatMap((e) => (e.kind === 'lab' ? [{ lab: labById(e.id), lesson: lessons.find((l) => l.id === e.lesson)! }] : []));
}

/** The course as links: welcome, then each lesson and its labs. */
function courseLinks(): CourseLink[] {
  return [
    HOME,
    ...course().map((e): CourseLink => ({ href: e.href, label: e.kind === 'lab' ? labById(e.id).title : e.title, kind: e.kind })),
  ];
}

/** Starlight's sidebar entries for the course: lessons, and their labs marked as labs. */
export function courseSidebar() {
  return course().map((e) =>
    e.kind === 'lesson'
      ? { label: e.title, link: e.href }
      : {
          label: labById(e.id).title,
          link: e.href,
          badge: { text: 'Lab', variant: 'note' as const },
          attrs: { class: 'dplab-sidebar-lab' },
        },
  );
}

/** The lesson a lab follows, and the next lab on the course's path (null after the last). */
export function labPlace(id: string): { lesson: CourseLesson; nextLab: Lab | null; index: number } {
  const labs = courseLabs();
  const index = labs.findIndex((l) => l.lab.id === id);
  if (index < 0) throw new Error(`Lab "${id}" is named by no lesson's frontmatter \`labs\`, so it has no place in the course`);
  return { lesson: labs[index].lesson, nextLab: labs[index + 1]?.lab ?? null, index };
}

/** The labs after `id` on the course's path, with their titles and modes (a lab page starts the next one's cluster ahead from them). */
export function labsAfter(id: string): { id: string; title: string; modes: readonly string[] }[] {
  return courseLabs()
    .slice(labPlace(id).index + 1)
    .map(({ lab }) => ({ id: lab.id, title: lab.title, modes: lab.modes }));
}

/** Each concept a lab practises: its title and the lesson that teaches it (the first, in course order). */
export function conceptsTaught(ids: readonly string[]): { id: string; title: string; lesson: CourseLesson }[] {
  const lessons = courseLessons();
  return ids.map((id) => {
    const concept = CONCEPTS.find((c) => c.id === id);
    const lesson = lessons.find((l) => l.concepts.includes(id));
    if (!concept || !lesson) throw new Error(`Concept ${id} is in no lesson's frontmatter \`concepts\``);
    return { id, title: concept.title, lesson };
  });
}

/** The pages before and after `href` on the course's path, as links; undefined for a page off it. */
export function courseNeighbours(href: string): { prev?: CourseLink; next?: CourseLink } | undefined {
  const around = neighbours(href, course());
  if (!around) return undefined;
  const link = (h: string | null) => (h === null ? undefined : courseLinks().find((l) => l.href === h));
  return { prev: link(around.prev), next: link(around.next) };
}
