// The wire schemas accept what the runner really sends (so the browser's validation never
// refuses a good answer) and name the field when an answer has another shape.
import { describe, expect, it } from 'vitest';
import { z as z3 } from 'zod';
import { explainView } from '../dataplane/explain-view.ts';
import { listFixtures, loadFixture } from '../dataplane/fixture-catalog.ts';
import { explainResponseSchema, fixtureListSchema } from './explain.ts';
import { clusterEventSchema } from './clusters.ts';
import { checkResultSchema } from './checks.ts';
import { joinRequestSchema } from './portal.ts';
import { progressFileSchema } from './progress.ts';
import { viewerLinkSchema } from './terminal.ts';
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
    expect(describeIssues(r.error!)).toBe('facts[0].expected: Expected string');
    const e = clusterEventSchema.safeParse({ type: 'status', mode: 'ebpf', status: {} });
    expect(describeIssues(e.error!)).toMatch(/^mode: Expected "iptables" or "ipvs" or "nftables" or "cilium"; status.mode: /);
  });

  it('word what zod 4 leaves as a bare "Invalid input" from the issue, and keep the messages a schema or zod 3 gives', () => {
    const said = (r: { error?: Parameters<typeof describeIssues>[0] }) => describeIssues(r.error!);
    expect(said(clusterEventSchema.safeParse({ type: 'gone' }))).toBe('type: No matching discriminator');
    expect(said(progressFileSchema().safeParse({ labs: { l: { hints: { s: -1 } } } }))).toBe('labs.l.hints.s: Expected at least 0');
    expect(said(progressFileSchema().safeParse({ version: 2 }))).toBe('version: Expected 1');
    expect(said(viewerLinkSchema.safeParse({ path: '/x' }))).toBe('path: Invalid input (invalid_format)');
    expect(said(joinRequestSchema.safeParse({ code: '', name: 'Ada\u0007' }))).toBe(
      'code: Enter the workshop code.; name: A name without control characters, please.',
    );
    expect(said(joinRequestSchema.safeParse(null))).toBe('(top level): Enter the code and your name.');
    // The Kubernetes object and lab schemas are zod 3: its English messages pass through.
    expect(said(z3.object({ spec: z3.object({ port: z3.number() }) }).safeParse({ spec: { port: '80' } }))).toBe(
      'spec.port: Expected number, received string',
    );
  });
});
