/** The facts line of a lesson or lab on the index pages: time, modes, what it needs. */
import { clusterMemoryText } from '../../scripts/catalogue/footprint.ts';
import { MODE_INFO, type Mode } from '../../scripts/catalogue/modes.ts';
import { readingMinutes, type CourseLesson } from '../../scripts/catalogue/course-order.ts';
import type { Lab } from '../../scripts/labs/schema.ts';
import { labById } from './course.ts';

const modeNames = (modes: readonly Mode[]) => modes.map((m) => MODE_INFO[m].short).join(', ');

export function labFacts(lab: Lab) {
  return [
    { term: 'Time', value: `about ${lab.minutes} min` },
    { term: 'Modes', value: modeNames(lab.modes) },
    { term: 'Needs', value: `a cluster, ${clusterMemoryText(lab.modes)} of memory` },
  ];
}

export function lessonFacts(lesson: CourseLesson) {
  const labs = lesson.labs.map(labById);
  const modes = [...new Set(labs.flatMap((l) => l.modes))];
  return [
    { term: 'Reading', value: `about ${readingMinutes(lesson)} min` },
    { term: 'Labs', value: labs.length ? `${labs.length}, about ${labs.reduce((n, l) => n + l.minutes, 0)} min` : 'none' },
    ...(modes.length ? [{ term: 'Modes', value: modeNames(modes) }] : []),
    { term: 'Needs', value: labs.length ? 'no cluster to read; its labs do' : 'no cluster' },
  ];
}
