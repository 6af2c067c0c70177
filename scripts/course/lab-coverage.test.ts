/**
 * Lab coverage: every concept the syllabus marks **lab** is practised by a checked lab step, and
 * labs name only known concepts. A step practises the concepts it lists; a step that lists none
 * practises its lab's concepts (the schema's `step.concepts` defaults to empty, and the loader
 * already requires a step's concepts to be a subset of its lab's). Labs come through the
 * engine's registry, so they are validated exactly as the runner loads them.
 */
import { describe, expect, it } from 'vitest';
import { loadLabs } from '../labs/registry.ts';
import { LAB_MODULES } from '../../labs/index.ts';
import { CONCEPTS, isConceptId } from './concepts.ts';

const labs = loadLabs();

/** Concept id → `<lab>/<step>` ids that practise it. */
export function labConcepts(): Map<string, string[]> {
  const practised = new Map<string, string[]>(CONCEPTS.map((c) => [c.id, []]));
  for (const lab of labs) {
    for (const step of lab.steps) {
      const ids: readonly string[] = step.concepts.length ? step.concepts : lab.concepts;
      for (const id of ids) practised.get(id)?.push(`${lab.id}/${step.id}`);
    }
  }
  return practised;
}

describe('lab coverage', () => {
  it('loads every lab in labs/index.ts through the registry', () => {
    expect(labs.map((l) => l.id)).toEqual(LAB_MODULES.map((m) => m.folder));
  });

  it('names only known concept ids, in labs and in steps', () => {
    // Read the raw definitions too: the schema rejects unknown ids, and this says which lab did.
    const unknown = LAB_MODULES.flatMap((m) => {
      const def = m.definition as { concepts?: unknown[]; steps?: { id?: string; concepts?: unknown[] }[] };
      const own = (def.concepts ?? []).filter((c) => typeof c !== 'string' || !isConceptId(c)).map((c) => `${m.folder}: ${String(c)}`);
      const steps = (def.steps ?? []).flatMap((s) =>
        (s.concepts ?? []).filter((c) => typeof c !== 'string' || !isConceptId(c)).map((c) => `${m.folder}/${s.id}: ${String(c)}`),
      );
      return [...own, ...steps];
    });
    expect(unknown, `unknown concept ids: ${unknown.join('; ')}`).toEqual([]);
  });

  it('practises every lab concept of the syllabus in some lab step', () => {
    const practised = labConcepts();
    const missing = CONCEPTS.filter((c) => c.lab && (practised.get(c.id) ?? []).length === 0).map((c) => `${c.id} (${c.title})`);
    expect(missing, `lab concepts no lab step practises: ${missing.join('; ')}`).toEqual([]);
  });

  it('has every lab practise at least one concept the syllabus marks lab', () => {
    const labIds = new Set<string>(CONCEPTS.filter((c) => c.lab).map((c) => c.id));
    const idle = labs.filter((l) => !l.concepts.some((c) => labIds.has(c))).map((l) => l.id);
    expect(idle, `labs practising no lab concept: ${idle.join(', ')}`).toEqual([]);
  });
});
