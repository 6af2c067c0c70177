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
  /** A blurb: what a page says about one or more labs (a list item, a table row, or the sentence around inline links). */
  interface Blurb {
    file: string;
    labs: string[];
    text: string;
    kind: 'note' | 'list' | 'table' | 'prose';
  }
  const LIST_ITEM = /(?:^|\n)- \[[^\]]+\]\(\/labs\/([a-z0-9-]+)\/\):([\s\S]*?)(?=\n- |\n\n|\n?$(?![\s\S]))/g;
  const TABLE_ROW = /(?:^|\n)\| \[[^\]]+\]\(\/labs\/([a-z0-9-]+)\/\) \|([^\n]*)/g;
  const LAB_LINK = /\]\(\/labs\/([a-z0-9-]+)\/\)/g;
  /** A note of <LessonLabs notes={{ 'lab-id': "…" }} />: what the lesson says to look for in that lab. */
  const LESSON_LABS_NOTE = /^\s*'([a-z0-9-]+)':\s*(["'])((?:(?!\2).)*)\2,?\s*$/gm;
  function blurbsOf(file: string, body: string): Blurb[] {
    const found: Blurb[] = [];
    for (const m of body.matchAll(LESSON_LABS_NOTE)) found.push({ file, labs: [m[1]], text: m[3], kind: 'note' });
    for (const m of body.matchAll(LIST_ITEM)) found.push({ file, labs: [m[1]], text: m[2], kind: 'list' });
    for (const m of body.matchAll(TABLE_ROW)) found.push({ file, labs: [m[1]], text: m[2], kind: 'table' });
    // Prose: the sentence (within its paragraph) around each inline link; one sentence may name several labs.
    const rest = body.replace(LIST_ITEM, '\n').replace(TABLE_ROW, '\n');
    for (const paragraph of rest.split(/\n\s*\n/))
      for (const sentence of paragraph.replace(/\s+/g, ' ').split(/(?<=[.!?])\s+(?=[A-Z[`*])/)) {
        const linked = [...sentence.matchAll(LAB_LINK)].map((m) => m[1]);
        if (linked.length) found.push({ file, labs: linked, text: sentence.replace(/\[([^\]]+)\]\([^)]*\)/g, '$1'), kind: 'prose' });
      }
    return found;
  }
  const blurbs = readDocPages().flatMap((p) => blurbsOf(p.file, p.body));

  it('are found', () => {
    expect(blurbs.length).toBeGreaterThan(5);
  });

  it("are found in lessons' lab notes and in prose", () => {
    const kinds = new Set(blurbs.map((b) => b.file));
    expect(kinds.size).toBeGreaterThan(3);
    expect(blurbs.filter((b) => b.kind === 'note').length, 'notes of <LessonLabs>').toBeGreaterThan(10);
    expect(blurbs.filter((b) => b.kind === 'prose').length, 'sentences linking a lab').toBeGreaterThan(0);
  });

  it.each(blurbs.map((b) => [`${b.file} → ${b.labs.join(', ')}: ${b.text.replace(/\s+/g, ' ').trim().slice(0, 60)}`, b] as const))(
    '%s names only what the steps do',
    (_n, b) => {
      const named = b.labs.map((id) => labs.find((l) => l.id === id));
      for (const [i, lab] of named.entries()) expect(lab, `no lab ${b.labs[i]}`).toBeTruthy();
      // A sentence that links several labs may name what any of them does.
      const text = named.map((l) => stepText(l!)).join('\n');
      for (const [, term] of b.text.matchAll(/`([^`]+)`/g))
        expect(text, `${b.file}: \`${term}\` is in no step of ${b.labs.join(' or ')}`).toContain(term);
      // A tool or action the blurb promises must be in a command the lab has the learner run.
      const commands = named.map((l) => commandText(l!)).join('\n');
      for (const [word, ran] of Object.entries(ACTIONS))
        if (new RegExp(`\\b${word}`, 'i').test(b.text))
          expect(commands, `${b.file}: "${word}" but no command of ${b.labs.join(' or ')} runs it`).toMatch(ran);
    },
  );
});
