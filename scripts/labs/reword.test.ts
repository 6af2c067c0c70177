/**
 * `verify-labs --reword`: a check's new wording goes into every stored file it replays, and
 * nothing else does; a changed verdict and a shared file whose modes now want different words are
 * listed and left. Files are written through a collector here, never to the repository.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../base/paths.ts';
import { loadLabs, requireLab } from './registry.ts';
import { rewordRecordings } from './reword.ts';
import type { Lab } from './schema.ts';

type Check = Lab['steps'][number]['check'];

/** The lab with one step's check changed by `change`. */
function withCheck(lab: Lab, stepId: string, change: (check: Check) => Check['evaluate']): Lab {
  return { ...lab, steps: lab.steps.map((s) => (s.id === stepId ? { ...s, check: { ...s.check, evaluate: change(s.check) } } : s)) } as Lab;
}

function collector() {
  const written = new Map<string, string>();
  return { written, write: (path: string, text: string) => void written.set(path, text) };
}

describe('rewordRecordings', () => {
  it("on the course as it is, every stored message is already its check's", () => {
    const report = rewordRecordings(loadLabs());
    expect(report.reworded).toEqual([]);
    expect(report.left).toEqual([]);
    expect(report.unchanged).toBeGreaterThan(100);
  });

  it("a reworded check's new message goes into each file it replays, and only the message changes", () => {
    const lab = withCheck(requireLab('first-service'), 'proxy-mode', (check) => (obs, ctx) => {
      const v = check.evaluate(obs, ctx);
      return { ...v, message: `${v.message} (reworded)` };
    });
    const c = collector();
    const report = rewordRecordings([lab], { write: c.write });
    const files = report.reworded.map((r) => r.file);
    expect(files).toContain('labs/first-service/observations/proxy-mode.solved.cilium.kind.json');
    expect(files).toContain('labs/first-service/observations/proxy-mode.unsolved.iptables.kind.json');
    expect(files.every((f) => f.includes('/proxy-mode.'))).toBe(true);
    expect(report.left).toEqual([]);
    for (const r of report.reworded) {
      expect(r.to).toBe(`${r.from} (reworded)`);
      const path = join(projectRoot, r.file);
      const before = JSON.parse(readFileSync(path, 'utf8')) as { expect: { message: string } };
      const after = JSON.parse(c.written.get(path)!) as { expect: { message: string } };
      expect(after.expect.message).toBe(r.to);
      expect({ ...after, expect: { ...after.expect, message: r.from } }).toEqual(before);
    }
    expect(c.written.size).toBe(report.reworded.length);
  });

  it('a verdict that changed is listed to be recorded again, and its file is not written', () => {
    const lab = withCheck(requireLab('first-service'), 'deploy-web', (check) => (obs, ctx) => ({
      ...check.evaluate(obs, ctx),
      status: 'pass',
    }));
    const c = collector();
    const report = rewordRecordings([lab], { write: c.write });
    const unsolved = report.left.filter((l) => l.file.includes('/deploy-web.unsolved.'));
    expect(unsolved.length).toBeGreaterThan(0);
    for (const l of unsolved) expect(l.why).toMatch(/^the check now says pass on \w+ \(.*\), not fail: record it again on a live cluster$/);
    expect([...c.written.keys()].some((p) => p.includes('/deploy-web.unsolved.'))).toBe(false);
  });

  it('a hand-written file shared by modes that now get different words is left, with the modes named', () => {
    const l7 = requireLab('cilium-l7-policy');
    const lab = withCheck({ ...l7, modes: ['iptables', 'nftables'] } as Lab, 'hubble-drops', (check) => (obs, ctx) => {
      const v = check.evaluate(obs, ctx);
      return { ...v, message: `${v.message} on ${ctx.mode}` };
    });
    const report = rewordRecordings([lab], { write: collector().write });
    expect(report.left).toContainEqual({
      file: 'labs/cilium-l7-policy/observations/hubble-drops.solved.json',
      why: 'its modes (iptables, nftables) now get different messages: give each mode its own file',
    });
  });
});
