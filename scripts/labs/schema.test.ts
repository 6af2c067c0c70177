/** Lab definitions are validated at load, and a broken one names its file and field. */
import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { labsDir } from '../base/paths.ts';
import { LAB_MODULES } from '../../labs/index.ts';
import firstService from '../../labs/first-service/lab.ts';
import { fieldPath } from './friendly-error.ts';
import { loadLabs, requireLab, requireMode, requireStep, validateLab } from './registry.ts';

const broken = (patch: (lab: any) => void) => {
  const def: any = { ...firstService, steps: firstService.steps.map((s) => ({ ...s })) };
  patch(def);
  return () => validateLab({ folder: 'first-service', definition: def });
};

describe('lab schema', () => {
  it('loads every lab', () => {
    expect(loadLabs().map((l) => l.id)).toContain('first-service');
  });

  it('names the file and the field path of a problem', () => {
    expect(broken((l) => (l.steps[2].hints = []))).toThrow('labs/first-service/lab.ts: steps[2].hints: must have at least 1 item');
    expect(broken((l) => (l.modes = ['iptables', 'bpf']))).toThrow(
      'labs/first-service/lab.ts: modes[1]: must be one of iptables, ipvs, nftables, cilium',
    );
    expect(broken((l) => (l.concepts = ['S2', 'X9']))).toThrow('labs/first-service/lab.ts: concepts[1]: is not a concept id');
    expect(broken((l) => (l.steps[0].check = { gather: () => ({}) }))).toThrow(
      'labs/first-service/lab.ts: steps[0].check: must be a check',
    );
    expect(broken((l) => (l.steps[1].id = 'deploy-web'))).toThrow('labs/first-service/lab.ts: steps[1]: duplicate step id "deploy-web"');
    expect(broken((l) => (l.namespace = 'default'))).toThrow(
      'labs/first-service/lab.ts: namespace: must be a namespace name starting with `lab-`',
    );
    expect(broken((l) => (l.extra = 1))).toThrow(/labs\/first-service\/lab\.ts: Unrecognized key/);
  });

  it('checks what the schema cannot see: folder name, files, step concepts', () => {
    expect(broken((l) => (l.id = 'other-lab'))).toThrow('labs/first-service/lab.ts: id: must equal the folder name "first-service"');
    expect(broken((l) => (l.setup = { ...l.setup, manifests: ['manifests/nope.yaml'] }))).toThrow(
      'labs/first-service/lab.ts: setup.manifests[0]: file manifests/nope.yaml does not exist in labs/first-service/',
    );
    expect(broken((l) => (l.setup = { ...l.setup, workspace: ['../../etc/passwd'] }))).toThrow(
      'labs/first-service/lab.ts: setup.workspace[0]: must be a path inside the lab folder',
    );
    expect(broken((l) => (l.steps[3].concepts = ['I1']))).toThrow(
      "labs/first-service/lab.ts: steps[3].concepts[0]: I1 is not among the lab's concepts (S2, S3)",
    );
  });

  it('lists every issue in the fix, one line each', () => {
    try {
      broken((l) => ((l.title = ''), (l.minutes = -1)))();
      expect.unreachable();
    } catch (err: any) {
      expect(err.fix).toContain('  - labs/first-service/lab.ts: title: must not be empty');
      expect(err.fix).toContain('  - labs/first-service/lab.ts: minutes:');
    }
  });

  it('formats field paths like code', () => {
    expect(fieldPath(['steps', 2, 'solution', 'commands', 0])).toBe('steps[2].solution.commands[0]');
  });

  it('lists every labs/<id>/lab.ts in labs/index.ts', () => {
    const folders = readdirSync(labsDir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(labsDir, d.name, 'lab.ts')))
      .map((d) => d.name);
    expect(LAB_MODULES.map((m) => m.folder).sort()).toEqual(folders.sort());
  });

  it('matches ids from clients against the known set: unknown ids are 404s naming the known ones', () => {
    expect(() => requireLab('../../etc')).toThrow(/^Unknown lab "\.\.\/\.\.\/etc"\. Known: .*first-service/);
    const lab = requireLab('first-service');
    expect(() => requireStep(lab, 'nope')).toThrow('Known: deploy-web, expose-web, reach-web, proxy-mode.');
    expect(() => requireMode(lab, 'bpf')).toThrow('Known: iptables, ipvs, nftables, cilium.');
    expect(requireMode(lab, undefined)).toBe('iptables');
    try {
      requireLab('x');
    } catch (err: any) {
      expect(err.status).toBe(404);
    }
  });
});
