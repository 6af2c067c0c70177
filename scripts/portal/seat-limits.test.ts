// Per-seat limits attacked as a learner would (issue 36: a fork bomb in one seat took the host), on
// this host's own cgroups: two seat users, each with its cgroup(s) made as the portal makes them
// (small limits, so the test is quick), and processes started exactly as a seat's shells and
// solutions are (dropTo: into the cgroup as root, rlimits, then the seat's user).
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectCgroups, SeatCgroups } from '../terminals/seat-cgroup.ts';
import { dropTo, type ShellUser } from '../terminals/shell-user.ts';
import { LocalSeatBackend } from './local-backend.ts';
import { prepareSeatFolder, SeatUsers } from './seat-users.ts';

const host = process.platform === 'linux' && process.getuid?.() === 0 ? detectCgroups() : null;
const why = !host ? 'not root on Linux' : host.kind === 'none' ? host.reason : '';
const LIMITS = { pids: 40, memoryBytes: 64 * 1024 ** 2 };
const PYTHON = '/usr/bin/python3';

interface Seat {
  user: ShellUser;
  procs: string[];
}

/** Runs `script` with bash as the seat's user, the way its shells start; exit code or signal, and output. */
function asSeat(seat: Seat, script: string, timeoutMs = 60_000): Promise<{ code: number | null; signal: string | null; out: string }> {
  const argv = [...dropTo(seat.user, seat.procs), '/bin/bash', '-c', script];
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: '/', env: { PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out });
    });
  });
}

function pidsIn(procs: string): number[] {
  return readFileSync(procs, 'utf8').split('\n').filter(Boolean).map(Number);
}

describe.skipIf(why !== '')(`a learner against their seat's cgroup limits${why ? ` (skipped: ${why})` : ''}`, { timeout: 120_000 }, () => {
  const users = new SeatUsers();
  let cgroups: SeatCgroups;
  const seats: Seat[] = [];

  beforeAll(() => {
    cgroups = new SeatCgroups(host as Extract<typeof host, { dirs: string[] }>, LIMITS);
    for (let i = 0; i < 2; i++) {
      const user = users.take();
      seats.push({ user, procs: cgroups.create(user.uid) });
    }
  });

  afterAll(async () => {
    for (const { user } of seats) {
      await users.release(user);
      await cgroups.remove(user.uid);
    }
  });

  it('stops a fork bomb at the seat’s process limit, and the next seat’s shell still starts', async () => {
    const [a, b] = seats;
    // Children that stay (sleeping) until the bomb gives up: each fork past the limit fails with EAGAIN.
    const bomb = `import os, time
n = 0
try:
    while n < 300:
        if os.fork() == 0:
            os.close(1); os.close(2); time.sleep(60); os._exit(0)
        n += 1
    print("forked", n)
except OSError as e:
    print("stopped", n, e.errno)`;
    const r = await asSeat(a!, `exec ${PYTHON} -c '${bomb}'`);
    const [word, count] = r.out.trim().split(/\s+/);
    // Without the cgroup only RLIMIT_NPROC (512) would stop it, after all 300.
    expect(word, r.out).toBe('stopped');
    expect(Number(count)).toBeLessThan(LIMITS.pids);
    expect(pidsIn(a!.procs[0]!).length).toBeGreaterThanOrEqual(LIMITS.pids - 2);
    const other = await asSeat(b!, 'sleep 0.1 & wait; echo "still here $(id -u)"');
    expect(other.out.trim()).toBe(`still here ${b!.user.uid}`);
    await users.release(a!.user);
    users.adopt(a!.user.uid);
  });

  it('kills an allocation past the seat’s memory limit, and neither the runner nor the next seat notices', async () => {
    const [a, b] = seats;
    const hog = await asSeat(a!, `exec ${PYTHON} -c 'b = bytearray(256 * 1024 * 1024); print("allocated", len(b))'`);
    // Without the cgroup the 256 MiB are well inside RLIMIT_AS (4 GiB), and it prints "allocated".
    expect(hog.out, hog.out).not.toContain('allocated');
    expect(hog.signal).toBe('SIGKILL');
    const memory = dirname(a!.procs.at(-1)!);
    const events = readFileSync(`${memory}/${host!.kind === 'v2' ? 'memory.events' : 'memory.oom_control'}`, 'utf8');
    expect(Number(/oom_kill (\d+)/.exec(events)?.[1])).toBe(1);
    // The seat's next command works; so does the other seat's 32 MiB; the test process (as the runner) goes on.
    const again = await asSeat(a!, 'echo again');
    expect(again.out.trim()).toBe('again');
    const fine = await asSeat(b!, `exec ${PYTHON} -c 'b = bytearray(32 * 1024 * 1024); print("allocated", len(b))'`);
    expect(fine.out.trim()).toBe(`allocated ${32 * 1024 * 1024}`);
  });

  it('cannot raise its limits or leave its cgroup for the root cgroup', async () => {
    const [a] = seats;
    const dirs = a!.procs.map((p) => dirname(p));
    const files = [
      ...dirs.map((d) => `${d}/cgroup.procs`),
      `${dirs[0]}/pids.max`,
      `${dirs.at(-1)}/${host!.kind === 'v2' ? 'memory.max' : 'memory.limit_in_bytes'}`,
    ];
    const roots =
      host!.kind === 'v2' ? ['/sys/fs/cgroup/cgroup.procs'] : ['/sys/fs/cgroup/pids/cgroup.procs', '/sys/fs/cgroup/memory/cgroup.procs'];
    const script = [
      ...files.map((f) => `echo max > ${f}`),
      ...[...roots, ...dirs.map((d) => `${dirname(d)}/cgroup.procs`)].map((f) => `echo $$ > ${f}`),
    ]
      .map((c) => `if ${c}; then echo "WROTE ${c}"; fi`)
      .join('\n');
    const r = await asSeat(a!, `${script}\ncat /proc/self/cgroup`);
    expect(r.out).not.toContain('WROTE');
    for (const d of dirs) expect(r.out).toContain(`/${d.split('/').slice(-2).join('/')}\n`);
    expect(readFileSync(`${dirs[0]}/pids.max`, 'utf8').trim()).toBe(String(LIMITS.pids));
  });

  it('removes the seat’s cgroup once its processes are gone, even with a process left running', async () => {
    const [, b] = seats;
    const left = spawn(
      '/bin/sh',
      [
        '-c',
        `${dropTo(b!.user, b!.procs)
          .map((a) => `'${a}'`)
          .join(' ')} /bin/sleep 300`,
      ],
      { stdio: 'ignore', detached: true },
    );
    left.unref();
    const deadline = Date.now() + 10_000;
    while (pidsIn(b!.procs[0]!).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(pidsIn(b!.procs[0]!).length).toBeGreaterThan(0);
    await users.release(b!.user);
    await cgroups.remove(b!.user.uid);
    for (const p of b!.procs) expect(existsSync(dirname(p))).toBe(false);
    users.adopt(b!.user.uid);
  });

  it('keeps a seat’s cgroup for a restarted portal to take back, and sweeps one whose seat is gone', async () => {
    const state = mkdtempSync(join(tmpdir(), 'dplab-seat-sweep-'));
    chmodSync(state, 0o711);
    const kept = users.take();
    const gone = users.take();
    try {
      // A seat an earlier portal left (its folder, its user, its cgroup), and a cgroup whose seat was deleted while no portal ran.
      prepareSeatFolder(join(state, 'seats', 's09'), kept);
      const keptDirs = cgroups.create(kept.uid).map((p) => dirname(p));
      await users.release(gone);
      const goneDirs = cgroups.create(gone.uid).map((p) => dirname(p));
      new LocalSeatBackend({ stateDir: state, seatUsers: new SeatUsers(), seatCgroups: cgroups });
      for (const d of keptDirs) expect(existsSync(d), d).toBe(true);
      for (const d of goneDirs) expect(existsSync(d), d).toBe(false);
    } finally {
      await users.release(kept);
      await cgroups.remove(kept.uid);
      await cgroups.remove(gone.uid);
      rmSync(state, { recursive: true, force: true });
    }
  });
});
