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
import { readDocPages } from './lessons.ts';

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

describe("a lesson's lab blurbs", () => {
  // Issue 24: blurbs promised steps that did not exist (a conntrack step in cilium-kpr, a scale
  // step in first-service). Every command or value a blurb names in backticks must be in the
  // lab's steps: their instructions, snippets, hints or solutions.
  const stepText = (lab: (typeof labs)[number]) =>
    lab.steps
      .map((s) =>
        [
          s.title,
          s.instructions,
          ...(s.snippets ?? []).map((x) => x.command),
          ...(s.hints ?? []),
          ...Object.values(s.solution ?? {})
            .flat()
            .map(String),
        ].join('\n'),
      )
      .join('\n');
  /** Words a blurb may use for something the learner does, and what a command must contain then. */
  const ACTIONS: Record<string, RegExp> = {
    conntrack: /\bconntrack\b/,
    scale: /\bkubectl\b[^\n]*\bscale\b/,
    hubble: /\bhubble\b/,
    ipvsadm: /\bipvsadm\b/,
    ipset: /\bipset\b/,
    nslookup: /\bnslookup\b|\bdig\b/,
    metrics: /\/metrics\b|sync-time/,
  };
  const commandText = (lab: (typeof labs)[number]) =>
    lab.steps
      .flatMap((s) => [
        ...(s.snippets ?? []).map((x) => x.command),
        ...Object.values(s.solution ?? {})
          .flat()
          .map(String),
      ])
      .join('\n');
  const blurbs = readDocPages().flatMap((p) =>
    [...p.body.matchAll(/(?:^|\n)- \[[^\]]+\]\(\/labs\/([a-z0-9-]+)\/\):([\s\S]*?)(?=\n- |\n\n|\n?$(?![\s\S]))/g)].map((m) => ({
      file: p.file,
      lab: m[1],
      text: m[2],
    })),
  );

  it('are found', () => {
    expect(blurbs.length).toBeGreaterThan(5);
  });

  it.each(blurbs.map((b) => [`${b.file} → ${b.lab}`, b] as const))('%s names only what the steps do', (_n, b) => {
    const lab = labs.find((l) => l.id === b.lab);
    expect(lab, `no lab ${b.lab}`).toBeTruthy();
    const text = stepText(lab!);
    for (const [, term] of b.text.matchAll(/`([^`]+)`/g)) expect(text, `${b.file}: \`${term}\` is in no step of ${b.lab}`).toContain(term);
    // A tool or action the blurb promises must be in a command the lab has the learner run.
    const commands = commandText(lab!);
    for (const [word, ran] of Object.entries(ACTIONS))
      if (new RegExp(`\\b${word}`, 'i').test(b.text))
        expect(commands, `${b.file}: "${word}" but no command of ${b.lab} runs it`).toMatch(ran);
  });
});
