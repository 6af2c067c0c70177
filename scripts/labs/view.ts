/** Labs as JSON for the API, `dplab labs --json` and the page: data only, never the check code. */
import type { Lab } from './schema.ts';

export interface LabSummary {
  id: string;
  title: string;
  summary: string;
  modes: string[];
  minutes: number;
  concepts: string[];
  steps: { id: string; title: string; concepts: string[] }[];
}

export function labSummary(lab: Lab): LabSummary {
  return {
    id: lab.id,
    title: lab.title,
    summary: lab.summary,
    modes: [...lab.modes],
    minutes: lab.minutes,
    concepts: [...lab.concepts],
    steps: lab.steps.map((s) => ({ id: s.id, title: s.title, concepts: [...s.concepts] })),
  };
}

export function labDetail(lab: Lab) {
  return {
    ...labSummary(lab),
    namespace: lab.namespace,
    setup: lab.setup,
    steps: lab.steps.map(({ check: _check, ...step }) => step),
  };
}
