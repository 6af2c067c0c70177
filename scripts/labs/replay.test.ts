/**
 * The lab contract on stored observations (test tier 3): for every step of every lab and every
 * mode it runs on, the unsolved observations fail with the intended message and the solved ones
 * pass. A missing file fails the test, so no lab can skip a step.
 */
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../base/paths.ts';
import { findObservationFiles, observationFileName, readObservationFile, STATES } from './observations.ts';
import { loadLabs } from './registry.ts';

describe.each(loadLabs().map((lab) => [lab.id, lab] as const))('lab %s', (_id, lab) => {
  const cases = lab.steps.flatMap((step) => lab.modes.flatMap((mode) => STATES.map((state) => [step.id, mode, state, step] as const)));
  it.each(cases)('%s on %s, %s', (stepId, mode, state, step) => {
    const paths = findObservationFiles(lab.id, stepId, state, mode);
    expect(
      paths.length,
      `missing labs/${lab.id}/observations/${observationFileName(stepId, state, mode, 'kind')} (or a sim recording, or ${observationFileName(stepId, state)})`,
    ).toBeGreaterThan(0);
    // Every recording of the step (kind's and the sim's) must hold, not only the first.
    for (const path of paths) {
      const name = relative(projectRoot, path);
      const file = readObservationFile(path, name, step.check.observations);
      const verdict = step.check.evaluate(file.observations, { mode, namespace: lab.namespace });
      if (state === 'unsolved') {
        expect(file.expect, `${name} must say which message the learner sees (expect.message)`).toBeDefined();
        expect(verdict.status, name).toBe('fail');
        // An unsolved step must fail at once, not after the settle window.
        expect(verdict.pending ?? false, name).toBe(false);
      } else {
        expect(verdict.status, `${name}: ${verdict.message}`).toBe('pass');
      }
      if (file.expect) {
        expect(verdict.status, name).toBe(file.expect.status);
        expect(verdict.message, name).toBe(file.expect.message);
      }
      expect(verdict.facts.length, name).toBeGreaterThan(0);
    }
  });
});
