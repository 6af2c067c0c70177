// The wire schemas accept what the runner really sends (so the browser's validation never
// refuses a good answer) and name the field when an answer has another shape.
import { describe, expect, it } from 'vitest';
import { explainView } from '../dataplane/explain-view.ts';
import { listFixtures, loadFixture } from '../dataplane/fixture-catalog.ts';
import { explainResponseSchema, fixtureListSchema } from './explain.ts';
import { clusterEventSchema } from './clusters.ts';
import { checkResultSchema } from './checks.ts';
import { describeIssues } from './validate.ts';

describe('wire schemas', () => {
  it('accept every bundled fixture and its explorer answer', () => {
    const fixtures = listFixtures();
    expect(fixtureListSchema.parse({ fixtures }).fixtures).toHaveLength(fixtures.length);
    for (const f of fixtures) {
      const { info, model } = loadFixture(f.format, f.name);
      for (const service of info.services) {
        const view = explainView(model, service, { source: 'fixture', fixture: info.id, node: info.node });
        if (view) expect(explainResponseSchema.parse(view)).toEqual(view);
      }
    }
  });

  it('say which field has the wrong shape', () => {
    const r = checkResultSchema.safeParse({
      lab: 'l',
      step: 's',
      mode: 'iptables',
      status: 'pass',
      message: 'ok',
      facts: [{ label: 'x', expected: 1, seen: 'y', ok: true }],
      durationMs: 1,
      attempts: 1,
    });
    expect(r.success).toBe(false);
    expect(describeIssues(r.error!)).toBe('facts[0].expected: Expected string, received number');
    const e = clusterEventSchema.safeParse({ type: 'status', mode: 'ebpf', status: {} });
    expect(describeIssues(e.error!)).toMatch(/^mode: Invalid enum value/);
  });
});
