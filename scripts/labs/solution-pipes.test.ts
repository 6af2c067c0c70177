/**
 * Solutions run under `set -eo pipefail`. There a pipeline stage that stops reading before its
 * input ends (`head`, `grep -q` or `-m`, an awk program that `exit`s at its first match) can end
 * the command writing into it with SIGPIPE, which fails the pipeline with 141 and the whole
 * solution with it, depending only on how fast the writer was. etp-local's NodePort hash,
 * `iptables-save | awk '… {print; exit}'`, did so once on real kind. Every stage of every lab's
 * solution, in every mode, must read to the end.
 */
import { describe, expect, it } from 'vitest';
import { loadLabs } from './registry.ts';
import { solutionFor } from './schema.ts';

/** A stage after a `|` that can stop reading early. */
const STOPS_EARLY: [string, RegExp][] = [
  ['head', /\|\s*head\b/],
  ['grep -q / -m', /\|\s*grep\s+(?:-[a-zA-Z]*[qm]|--quiet|--silent|--max-count)/],
  ["awk's exit", /\|\s*awk\b[^|]*?'[^']*\bexit\b[^']*'/],
  ["sed's q", /\|\s*sed\s+(?:-n\s+)?'?[0-9]+q/],
];

const stages = loadLabs().flatMap((lab) =>
  lab.steps.flatMap((step) =>
    lab.modes.flatMap((mode) => solutionFor(step, mode).map((command) => ({ at: `${lab.id}/${step.id} on ${mode}`, command }))),
  ),
);

describe('solution pipelines read to the end', () => {
  it('the rule finds what it is for', () => {
    expect(stages.length).toBeGreaterThan(50);
    const early = [
      `docker exec n iptables-save -t nat | awk '$2 == "X" {print $NF; exit}'`,
      'kubectl get pods | head -1',
      'iptables-save | grep -q KUBE',
      'iptables-save | grep -cm1 KUBE',
    ];
    for (const c of early)
      expect(
        STOPS_EARLY.some(([, re]) => re.test(c)),
        c,
      ).toBe(true);
    const whole = [
      `iptables-save | awk '!seen && $2 == "X" {print $NF; seen = 1}'`,
      "grep -o 'seconds [0-9]*' | sed -n 1p",
      'iptables-save | grep -c KUBE',
    ];
    for (const c of whole)
      expect(
        STOPS_EARLY.some(([, re]) => re.test(c)),
        c,
      ).toBe(false);
  });

  it('no stage of any solution stops reading before its input ends', () => {
    const found = stages.flatMap(({ at, command }) => STOPS_EARLY.filter(([, re]) => re.test(command)).map(([what]) => `${at}: ${what}`));
    expect(found).toEqual([]);
  });
});
