/**
 * A solution names each answer before it records it (`with_pod="$(… | count)"`), and solutions run
 * under `set -eo pipefail`: there a value whose pipeline fails ends the whole solution, where it
 * did not when the same `$(…)` sat inside the recording command's argument. A count of nothing
 * found is an answer (a node without a local endpoint reaches 0), not a failure: every count named
 * in every lab's solution, in every mode, is computed here with docker, kubectl and kind answering
 * nothing, and must come out without ending the script. (etp-local's nftables count, `grep -o … |
 * wc -l`, ended it on real kind: grep found no endpoint on worker2.)
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadLabs } from './registry.ts';
import { solutionFor } from './schema.ts';

const bin = mkdtempSync(join(tmpdir(), 'dplab-answer-values-'));
afterAll(() => rmSync(bin, { recursive: true, force: true }));
for (const tool of ['docker', 'kubectl', 'kind', 'cilium', 'hubble']) {
  writeFileSync(join(bin, tool), '#!/bin/sh\nexit 0\n');
  chmodSync(join(bin, tool), 0o755);
}

/** `name="$(…)"` lines: an answer named from what a command printed. */
const NAMED = /^[a-z_][a-z0-9_]*="\$\(/;
/** …whose value is a count (the last stage counts lines, matches or occurrences). */
const COUNTS = /wc -l|grep -c|print n ?\+ ?0/;

const cases = loadLabs().flatMap((lab) =>
  lab.steps.flatMap((step) =>
    lab.modes.flatMap((mode) =>
      solutionFor(step, mode)
        .filter((c) => NAMED.test(c) && COUNTS.test(c))
        .map((command) => ({ name: `${lab.id}/${step.id} on ${mode}: ${command.split('=')[0]}`, command })),
    ),
  ),
);

describe('counts named in solutions', () => {
  it('are found in the labs', () => {
    expect(cases.length).toBeGreaterThan(5);
  });

  it.each(cases)('$name: nothing found is a value, not the end of the solution', ({ command }) => {
    const name = command.split('=')[0];
    const out = execFileSync('bash', ['-c', `set -eo pipefail\n${command}\necho "computed \${${name}}"`], {
      encoding: 'utf8',
      env: { PATH: `${bin}:/usr/bin:/bin`, DPLAB_CLUSTER: 'dplab-test', HOME: bin },
    });
    // (A count made inside the node, `docker exec … sh -c '… | grep -c …'`, is empty here: the stand-in ran nothing.)
    expect(out.trim().split('\n').at(-1)).toMatch(/^computed ?\d*$/);
  });
});
