import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeLimits, detectCgroups, enterArgv, SEAT_CGROUP_DEFAULTS, SeatCgroups, seatCgroupProcs, seatLimits } from './seat-cgroup.ts';

const HYBRID = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw`;
const HYBRID_SELF = '8:pids:/\n4:memory:/box/one\n0::/';
const UNIFIED = '30 23 0:27 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw,nsdelegate';
const UNIFIED_SELF = '0::/system.slice/dplab.service';

const fake = mkdtempSync(join(tmpdir(), 'dplab-fake-cgroup-'));
afterAll(() => rmSync(fake, { recursive: true, force: true }));

function folder(name: string, files: Record<string, string>): string {
  const root = join(fake, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('what the host offers for seat limits', () => {
  it('finds a hybrid host’s v1 pids and memory hierarchies, under the portal’s own cgroups, and ignores its controller-less cgroup2', () => {
    const root = folder('hybrid', { 'sys/fs/cgroup/pids/cgroup.procs': '', 'sys/fs/cgroup/memory/box/one/cgroup.procs': '' });
    expect(detectCgroups({ mountinfo: HYBRID, selfCgroup: HYBRID_SELF, isRoot: true }, root)).toEqual({
      kind: 'v1',
      dirs: [join(root, 'sys/fs/cgroup/pids/dplab'), join(root, 'sys/fs/cgroup/memory/box/one/dplab')],
    });
  });

  it('finds v2 with pids and memory at the portal’s parent and enables them there', () => {
    const root = folder('unified', {
      'sys/fs/cgroup/system.slice/cgroup.controllers': 'cpuset cpu io memory hugetlb pids rdma misc',
      'sys/fs/cgroup/system.slice/cgroup.subtree_control': '',
    });
    expect(detectCgroups({ mountinfo: UNIFIED, selfCgroup: UNIFIED_SELF, isRoot: true }, root)).toEqual({
      kind: 'v2',
      dirs: [join(root, 'sys/fs/cgroup/system.slice/dplab')],
    });
    expect(readFileSync(join(root, 'sys/fs/cgroup/system.slice/cgroup.subtree_control'), 'utf8')).toBe('+pids +memory');
  });

  it('says why not: v2 without the controllers, no hierarchy, not root', () => {
    const root = folder('nocontrollers', { 'sys/fs/cgroup/system.slice/cgroup.controllers': 'cpu io' });
    const v2 = detectCgroups({ mountinfo: UNIFIED, selfCgroup: UNIFIED_SELF, isRoot: true }, root);
    expect(v2).toEqual({ kind: 'none', reason: expect.stringMatching(/without the pids and memory controllers/) });
    const noMemory = HYBRID.split('\n')
      .filter((l) => !l.includes('memory'))
      .join('\n');
    expect(detectCgroups({ mountinfo: noMemory, selfCgroup: HYBRID_SELF, isRoot: true }, fake)).toEqual({
      kind: 'none',
      reason: expect.stringMatching(/no cgroup pids hierarchy|no cgroup memory hierarchy/),
    });
    expect(detectCgroups({ mountinfo: HYBRID, selfCgroup: HYBRID_SELF, isRoot: false }, fake)).toEqual({
      kind: 'none',
      reason: 'the portal is not root',
    });
    expect(describeLimits({ kind: 'none', reason: 'the portal is not root' }, SEAT_CGROUP_DEFAULTS)).toMatch(/rlimits only/);
  });

  it('makes a v1 seat’s cgroups with their limits, and a v2 seat’s, and sweeps only what no seat holds', async () => {
    const v1 = new SeatCgroups({ kind: 'v1', dirs: [join(fake, 'v1/pids/dplab'), join(fake, 'v1/memory/dplab')] }, SEAT_CGROUP_DEFAULTS);
    const procs = v1.create(2_000_000_001);
    expect(procs).toEqual([
      join(fake, 'v1/pids/dplab/seat-2000000001/cgroup.procs'),
      join(fake, 'v1/memory/dplab/seat-2000000001/cgroup.procs'),
    ]);
    expect(readFileSync(join(fake, 'v1/pids/dplab/seat-2000000001/pids.max'), 'utf8')).toBe('512');
    expect(readFileSync(join(fake, 'v1/memory/dplab/seat-2000000001/memory.limit_in_bytes'), 'utf8')).toBe(String(2 * 1024 ** 3));
    const v2 = new SeatCgroups({ kind: 'v2', dirs: [join(fake, 'v2/dplab')] }, { pids: 100, memoryBytes: 64 * 1024 ** 2 });
    v2.create(7);
    expect(readFileSync(join(fake, 'v2/dplab/cgroup.subtree_control'), 'utf8')).toBe('+pids +memory');
    expect(readFileSync(join(fake, 'v2/dplab/seat-7/memory.max'), 'utf8')).toBe(String(64 * 1024 ** 2));
    // Stale and empty goes; a seat's own is kept; a folder not named seat-<uid> is never touched.
    mkdirSync(join(fake, 'v2/dplab/seat-8'));
    mkdirSync(join(fake, 'v2/dplab/other'));
    expect(v2.sweep((uid) => uid === 7)).toEqual([8]);
    expect(existsSync(join(fake, 'v2/dplab/other'))).toBe(true);
  });

  it('reads the operator’s limits and refuses nonsense', () => {
    expect(seatLimits({}, {})).toEqual(SEAT_CGROUP_DEFAULTS);
    expect(seatLimits({}, { DPLAB_SEAT_MEMORY: '512M', DPLAB_SEAT_PIDS: '200' })).toEqual({ pids: 200, memoryBytes: 512 * 1024 ** 2 });
    expect(seatLimits({ memory: '3GiB' }, { DPLAB_SEAT_MEMORY: '1G' }).memoryBytes).toBe(3 * 1024 ** 3);
    expect(() => seatLimits({ memory: 'lots' }, {})).toThrow(/memory limit/);
    expect(() => seatLimits({ pids: '3' }, {})).toThrow(/process limit/);
    expect(seatCgroupProcs({ DPLAB_SEAT_CGROUP: '/a/cgroup.procs:/b/cgroup.procs' })).toEqual(['/a/cgroup.procs', '/b/cgroup.procs']);
    expect(() => seatCgroupProcs({ DPLAB_SEAT_CGROUP: '/etc/passwd' })).toThrow();
    expect(enterArgv([])).toEqual([]);
  });
});
