// Answer steps make the learner find the value: the value is named first, on a line of its own
// that leaves it as a placeholder (`mode="<mode>"`) for the learner to fill in, never a command
// substitution or the literal answer; the snippet that writes the answer ConfigMap refers to it. (The solution may compute it; "Apply solution" is the
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
      step.snippets
        .filter((s) => /create configmap/.test(s.command))
        .map((s) => [`${lab.id}/${step.id}`, s.label, s.command, step.snippets] as const),
    ),
  );

  it('there are answer snippets to look at', () => expect(cases.length).toBeGreaterThan(5));

  it.each(cases)('%s: "%s"', (where, _label, command, snippets) => {
    if (MEASUREMENTS[where]) return;
    // Each value is named on a line of its own by an earlier snippet (`mode="<mode>"`), which the
    // learner finishes; the command that stores them only refers to them (`--from-literal=mode="$mode"`).
    const literals = [...command.matchAll(/--from-literal=[\w.-]+=("[^"]*"|\S+)/g)].map((m) => m[1].replace(/^"|"$/g, ''));
    expect(literals.length).toBeGreaterThan(0);
    for (const v of literals) {
      const name = /^\$(\w+)$/.exec(v)?.[1];
      expect(name, `${where}: the command should store a value named before it, not ${v}`).toBeDefined();
      const named = snippets.find((s) => s.command.startsWith(`${name}=`));
      expect(named, `${where}: a snippet before it names ${name}`).toBeDefined();
      expect(snippets.indexOf(named!)).toBeLessThan(snippets.findIndex((s) => s.command === command));
      const value = named!.command.slice(name!.length + 1);
      expect(value, `${where}: ${name} should hold a <placeholder> the learner replaces`).toMatch(/<[^<>]+>/);
      expect(value, `${where}: the snippet must not compute the answer`).not.toMatch(/\$\(|`/);
    }
  });

  it.each(cases)('%s: "%s" reads in lines a person can take in', (where, _label, command) => {
    for (const line of command.split('\n')) expect(line.length, `${where}: ${line}`).toBeLessThanOrEqual(100);
  });
});
