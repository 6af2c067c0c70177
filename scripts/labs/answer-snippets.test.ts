// Answer steps make the learner find the value: a snippet that writes the answer ConfigMap
// leaves the value as a placeholder (`<mode>`) for the learner to fill in, never a command
// substitution or the literal answer. (The solution may compute it; "Apply solution" is the
// learner asking to be shown.) A ConfigMap that stores a measurement for a later step rather
// than an answer to find is listed here with its reason.
import { describe, expect, it } from 'vitest';
import { loadLabs } from './registry.ts';

const MEASUREMENTS: Record<string, string> = {
  'scale-compare/baseline': 'the baseline is a measurement the later steps compare with, not an answer',
};

describe('answer snippets leave the answer to the learner', () => {
  const cases = loadLabs().flatMap((lab) =>
    lab.steps.flatMap((step) =>
      step.snippets.filter((s) => /create configmap/.test(s.command)).map((s) => [`${lab.id}/${step.id}`, s.label, s.command] as const),
    ),
  );

  it('there are answer snippets to look at', () => expect(cases.length).toBeGreaterThan(5));

  it.each(cases)('%s: "%s"', (where, _label, command) => {
    if (MEASUREMENTS[where]) return;
    const literals = [...command.matchAll(/--from-literal=[\w.-]+=("[^"]*"|\S+)/g)].map((m) => m[1].replace(/^"|"$/g, ''));
    expect(literals.length).toBeGreaterThan(0);
    for (const v of literals) {
      expect(v, `${where}: the value should hold a <placeholder> the learner replaces`).toMatch(/<[^<>]+>/);
      expect(v, `${where}: the snippet must not compute the answer`).not.toMatch(/\$\(|`/);
    }
  });
});
