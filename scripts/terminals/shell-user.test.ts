import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyEnv } from '../../test/fixtures/doubles.ts';
import { runAsUser, shellUser, writeAsUser } from './shell-user.ts';

describe('DPLAB_SHELL_USER', () => {
  it('is <uid>:<gid> of a user other than root, or unset', () => {
    expect(shellUser({})).toBeNull();
    expect(shellUser({ DPLAB_SHELL_USER: '' })).toBeNull();
    expect(shellUser({ DPLAB_SHELL_USER: '2000000003:2000000003' })).toEqual({ uid: 2000000003, gid: 2000000003 });
    for (const bad of ['0:0', '1000:0', 'root', '12:', '-5:5', '1:2:3', '99999999999:1'])
      expect(() => shellUser({ DPLAB_SHELL_USER: bad }), bad).toThrow(/must be <uid>:<gid> of a user other than root/);
  });
});

const asRoot = process.platform === 'linux' && process.getuid?.() === 0;

// What root does in a learner's workspace, done as the learner: the kernel checks every path.
describe.runIf(asRoot)('acting in a seat as its user', () => {
  const user = { uid: 2_000_009_001, gid: 2_000_009_001 };
  const top = mkdtempSync(join(tmpdir(), 'dplab-as-user-'));
  const restore = applyEnv({ DPLAB_STATE_DIR: join(top, 'seat'), DPLAB_TOKEN: 'runner-token-of-this-seat-0123456789' });
  mkdirSync(join(top, 'seat'), { recursive: true });
  chmodSync(top, 0o711);
  afterAll(() => {
    rmSync(top, { recursive: true, force: true });
    restore();
  });

  it("runs as the seat's uid, with no group or capability of root and none of the runner's secrets", async () => {
    const r = await runAsUser(user, '/bin/sh', ['-c', 'id -u; id -G; grep CapEff /proc/self/status; env'], { extra: { KUBECONFIG: '/k' } });
    const [uid, groups, caps] = r.stdout.split('\n');
    expect(uid).toBe(String(user.uid));
    expect(groups).toBe(String(user.gid));
    expect(caps).toMatch(/CapEff:\s+0+$/);
    expect(r.stdout).toContain('KUBECONFIG=/k');
    expect(r.stdout).not.toContain('DPLAB_TOKEN');
  });

  it("writes lab files without following a learner's link to a root-owned file", async () => {
    const work = join(top, 'work');
    mkdirSync(work);
    chmodSync(work, 0o777);
    const rootFile = join(top, 'root.txt');
    writeFileSync(rootFile, 'root only\n', { mode: 0o644 });
    symlinkSync(rootFile, join(work, 'a.yaml'));
    await writeAsUser(user, work, new Map([['a.yaml', 'lab file\n']]));
    expect(readFileSync(rootFile, 'utf8')).toBe('root only\n');
    expect(readFileSync(join(work, 'a.yaml'), 'utf8')).toBe('lab file\n');
    expect(statSync(join(work, 'a.yaml')).uid).toBe(user.uid);
  });
});
