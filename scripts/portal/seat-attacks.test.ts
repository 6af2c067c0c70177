// A workshop room, attacked from inside: a real portal as root on the local backend, seats with a
// Unix user each, and a learner's shell opened through the portal exactly as the page opens it.
// From that shell every case of issue 36 that a learner in the next seat would try is tried, and
// each must fail: the operator's environment and the instructor's token out of reach, root never
// writing through a learner's links, no way to lock another seat out. Over the cluster test doubles.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distDir, projectRoot } from '../base/paths.ts';
import { requireLab } from '../labs/registry.ts';
import { applyEnv, seatStateFiles, useDoubles, type Doubles } from '../../test/fixtures/doubles.ts';
import { http, mustOpen, openShell, sh, type Shell } from '../../test/fixtures/terminal-client.ts';
import { SEAT_LIMITS } from '../terminals/shell-user.ts';
import { detectCgroups, SeatCgroups, type CgroupHost } from '../terminals/seat-cgroup.ts';
import { labOutline } from './dashboard.ts';
import { LocalSeatBackend } from './local-backend.ts';
import { SeatUsers } from './seat-users.ts';
import { startPortal, type RunningPortal } from './server.ts';

const asRoot = process.platform === 'linux' && process.getuid?.() === 0;
const SEATS = ['s01', 's02'] as const;
const INSTRUCTOR = `instructor-${'7'.repeat(40)}`;
const CANARY = `canary-${process.pid}-${Date.now()}`;
// The host's cgroups, as `dplab portal` finds them; a seat's memory limit small enough to reach quickly.
const CGROUPS: CgroupHost = asRoot ? detectCgroups() : { kind: 'none', reason: 'not root' };
const SEAT_MEMORY = 256 * 1024 ** 2;

describe.runIf(asRoot)('a learner attacking the workshop from their seat (local backend, portal as root)', { timeout: 240_000 }, () => {
  let doubles: Doubles | undefined;
  let portal: RunningPortal | undefined;
  let backend: LocalSeatBackend | undefined;
  let stateDir = '';
  const shells: Shell[] = [];
  const learners: { token: string; seat: string }[] = [];
  let restoreEnv = () => {};
  const origin = () => `http://127.0.0.1:${portal!.port}`;
  const headers = (token: string) => ({
    authorization: `Bearer ${token}`,
    origin: origin(),
    host: `127.0.0.1:${portal!.port}`,
    'content-type': 'application/json',
  });

  beforeAll(async () => {
    // The operator's environment: the instructor's token and a secret of their own.
    restoreEnv = applyEnv({ DPLAB_PORTAL_TOKEN: INSTRUCTOR, DPLAB_TEST_CANARY: CANARY });
    doubles = useDoubles({ rules: [] });
    const stateFiles = seatStateFiles(doubles, SEATS);
    const { DPLAB_STATE_DIR: _own, ...toolEnv } = doubles.env;
    stateDir = mkdtempSync(join(tmpdir(), 'dplab-seat-attacks-'));
    chmodSync(stateDir, 0o711);
    backend = new LocalSeatBackend({
      stateDir,
      // The host's own register, as a portal uses it: test files that run at once each get uids of their own.
      seatUsers: new SeatUsers(),
      ...(CGROUPS.kind !== 'none' ? { seatCgroups: new SeatCgroups(CGROUPS, { pids: 256, memoryBytes: SEAT_MEMORY }) } : {}),
      seatEnv: (id) => ({ ...toolEnv, DPLAB_DOUBLE_STATE: stateFiles.get(id)! }),
    });
    portal = await startPortal({
      backend,
      lab: labOutline(requireLab('first-service')),
      siteDir: distDir,
      port: 0,
      seats: SEATS.length,
      maxSeats: SEATS.length + 3,
      instructorToken: INSTRUCTOR,
      code: 'ROOM42',
    });
    for (const name of ['Ada', 'Bob']) {
      const r = await http(origin(), '/portal/api/join', {
        method: 'POST',
        headers: headers(''),
        body: JSON.stringify({ code: 'ROOM42', name }),
      });
      expect(r.status, r.body).toBe(200);
      learners.push(JSON.parse(r.body) as { token: string; seat: string });
    }
    const deadline = Date.now() + 180_000;
    while (Date.now() < deadline) {
      const seats = portal.workshop.state().seats;
      const failed = seats.find((s) => s.phase === 'failed');
      if (failed) throw new Error(`seat ${failed.id} failed: ${failed.message}`);
      if (seats.length >= SEATS.length && seats.every((s) => s.phase === 'ready')) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const l of learners) {
      const shell = mustOpen(await openShell(portal.port, headers(l.token), 'cols=200&rows=50'));
      shells.push(shell);
      await sh(shell, 'true');
    }
  });

  afterAll(async () => {
    shells.forEach((s) => s.close());
    if (portal) {
      await portal.workshop.end().catch(() => undefined);
      await portal.close();
    }
    doubles?.cleanup();
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
    restoreEnv();
  });

  it("finds nothing of the operator's environment in a seat's shell or its runner", async () => {
    const [shell] = shells;
    const env = await sh(shell!, 'env');
    expect(env.status).toBe(0);
    expect(env.out).toContain('DPLAB_SEAT=');
    for (const secret of [INSTRUCTOR, CANARY, 'DPLAB_TOKEN=', 'DPLAB_PORTAL_TOKEN']) expect(env.out).not.toContain(secret);
    // What the learner's page holds is their own token; nothing else of the portal's is in their processes.
    expect(env.out).not.toContain(learners[1]!.token);
    // The runner is root's, so the learner cannot read its environment; and it holds none of the operator's either.
    for (const pid of backend!.pids()) {
      const r = await sh(shell!, `cat /proc/${pid}/environ`);
      expect(r.out).not.toContain(INSTRUCTOR);
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
      expect(environ).not.toContain(CANARY);
      expect(environ).not.toContain(INSTRUCTOR);
      expect(environ).toMatch(/(^|\0)PATH=/);
    }
  });

  it('has a process and a memory limit in every seat shell (rlimits: a fork bomb stops at the seat)', async () => {
    const r = await sh(shells[0]!, 'ulimit -u; ulimit -v');
    expect(r.out.trim().split(/\s+/)).toEqual([String(SEAT_LIMITS.processes), String(SEAT_LIMITS.addressSpaceBytes / 1024)]);
  });

  it.skipIf(CGROUPS.kind === 'none')(
    "holds a seat's shell in its cgroup: it cannot leave, and an allocation past the seat's memory is killed while the runners and the next seat go on",
    async () => {
      const [a, b] = shells;
      const uid = (await sh(a!, 'id -u')).out.trim();
      const mine = await sh(a!, 'cat /proc/self/cgroup');
      expect(mine.out).toContain(`/dplab/seat-${uid}\n`);
      const roots = CGROUPS.kind === 'v2' ? ['/sys/fs/cgroup'] : ['/sys/fs/cgroup/pids', '/sys/fs/cgroup/memory'];
      for (const root of roots) expect((await sh(a!, `echo $$ > ${root}/cgroup.procs`)).status).not.toBe(0);
      expect((await sh(a!, 'cat /proc/self/cgroup')).out).toBe(mine.out);
      const runners = backend!.pids();
      const hog = await sh(a!, `/usr/bin/python3 -c 'b = bytearray(${2 * SEAT_MEMORY}); print("allocated")'`, 60_000);
      // Killed (128 + 9); without the cgroup, 512 MiB is inside RLIMIT_AS and it prints "allocated".
      expect(hog.out).not.toContain('allocated');
      expect(hog.status).toBe(137);
      for (const pid of runners) expect(() => process.kill(pid, 0)).not.toThrow();
      expect(backend!.pids()).toEqual(runners);
      expect((await sh(a!, 'echo still')).out.trim()).toBe('still');
      expect((await sh(b!, 'echo fine')).out.trim()).toBe('fine');
    },
  );

  it("never writes, as root, through a learner's links to a root-owned file or another seat's file", async () => {
    const [a, b] = shells;
    const [la, lb] = learners;
    const setup = (l: { token: string }) =>
      http(origin(), '/api/labs/first-service/setup', {
        method: 'POST',
        headers: headers(l.token),
        body: JSON.stringify({ mode: 'iptables' }),
        timeoutMs: 60_000,
      });
    // Seat 2 has its lab files; seat 1 learns where they are from its own (same layout).
    expect((await setup(lb!)).status).toBe(200);
    const victim = join(backend!.seatDir(lb!.seat), 'workspace', 'first-service', 'web-service.yaml');
    const victimBefore = readFileSync(victim, 'utf8');
    const rootFile = join(stateDir, 'root-owned.txt');
    writeFileSync(rootFile, 'root only\n', { mode: 0o644 });
    expect(
      (
        await sh(
          a!,
          `mkdir -p first-service && cd first-service && ln -sf ${rootFile} web-deployment.yaml && ln -sf ${victim} web-service.yaml && cd ..`,
        )
      ).status,
    ).toBe(0);
    const r = await setup(la!);
    expect(r.status, r.body).toBe(200);
    expect(readFileSync(rootFile, 'utf8')).toBe('root only\n');
    expect(statSync(rootFile).uid).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe(victimBefore);
    // The learner got real files in place of the links, their own.
    expect(await sh(a!, 'test -O first-service/web-deployment.yaml && test ! -L first-service/web-service.yaml')).toMatchObject({
      status: 0,
    });
    // Seat 2's shell still edits its own files.
    expect(await sh(b!, 'echo "# mine" >> first-service/web-service.yaml')).toMatchObject({ status: 0 });
  });

  it('prints a chosen instructor token nowhere: the command says where it comes from', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dplab-portal-cmd-'));
    chmodSync(dir, 0o711);
    const child = spawn(process.execPath, [join(projectRoot, 'scripts', 'dplab.mjs'), 'portal', '--port', '0', '--shared-user'], {
      cwd: projectRoot,
      env: { ...process.env, DPLAB_STATE_DIR: dir, DPLAB_PORTAL_TOKEN: INSTRUCTOR },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((r) => child.once('exit', r));
    const deadline = Date.now() + 60_000;
    while (!/Instructor/.test(out) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
    expect(out).toMatch(/Instructor: http:\/\/127\.0\.0\.1:\d+\/portal\/dashboard#token=<your DPLAB_PORTAL_TOKEN>/);
    expect(out).not.toContain(INSTRUCTOR.slice(0, 20));
  });

  it('cannot mark steps passed on the dashboard by claiming them: only checks the runner ran count', async () => {
    const [la] = learners;
    const steps = requireLab('first-service').steps.map((st) => st.id);
    const put = await http(origin(), '/api/progress', {
      method: 'PUT',
      headers: headers(la!.token),
      body: JSON.stringify({ labs: { 'first-service': { mode: 'iptables', passed: { iptables: steps } } } }),
    });
    expect(put.status, put.body).toBe(200);
    const activity = await http(origin(), '/api/activity', { headers: headers(la!.token) });
    expect(activity.status).toBe(200);
    const passed = (JSON.parse(activity.body) as { progress: { labs: Record<string, { passed?: Record<string, string[]> }> } }).progress
      .labs['first-service']?.passed;
    expect(Object.values(passed ?? {}).flat()).toEqual([]);
    // The dashboard, once it has read the seat again, shows nothing passed.
    const after = Date.now();
    const row = () => portal!.workshop.state().seats.find((st) => st.id === la!.seat)!;
    const deadline = Date.now() + 20_000;
    portal!.workshop.refresh(la!.seat);
    while ((row().readAt ?? 0) <= after && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(row().readAt).toBeGreaterThan(after);
    expect(row().steps.filter((c) => c.status === 'passed')).toEqual([]);
  });

  it("cannot lock another seat out with wrong tokens, at the portal or at that seat's runner", async () => {
    const [a] = shells;
    const [, lb] = learners;
    const target = portal!.workshop.target(lb!.seat);
    if ('waiting' in target) throw new Error(target.waiting);
    const runnerB = Number(new URL(target.endpoint.url).port);
    // 60 wrong tokens at the portal and 60 at seat 2's runner, as fast as curl goes.
    const flood = (port: number, path: string) =>
      `for i in $(seq 60); do curl -s -o /dev/null -w '%{http_code} ' -H "Authorization: Bearer wrong-$i" -H "Host: 127.0.0.1:${port}" http://127.0.0.1:${port}${path} & done; wait; echo`;
    // Right after each flood (the guesser's bucket full), seat 2's learner and the instructor: every call answers.
    const atPortal = await sh(a!, flood(portal!.port, '/api/session'), 60_000);
    expect((await http(origin(), '/api/session', { headers: headers(lb!.token) })).status).toBe(200);
    expect((await http(origin(), '/portal/api/state', { headers: headers(INSTRUCTOR) })).status).toBe(200);
    expect(atPortal.out).toContain('429');
    const atRunner = await sh(a!, flood(runnerB, '/api/session'), 60_000);
    expect((await http(origin(), '/api/session', { headers: headers(lb!.token) })).status).toBe(200);
    expect(atRunner.out).toContain('429');
    // And its terminal opens.
    const shell = mustOpen(await openShell(portal!.port, headers(lb!.token), 'cols=80&rows=24'));
    await shell.waitFor('"type":"ready"');
    shell.close();
  });

  it('cannot take every seat, nor keep others out with wrong codes', async () => {
    const [a] = shells;
    const join = (code: string) =>
      `curl -s -o /dev/null -w '%{http_code} ' -X POST -H 'Content-Type: application/json' -H 'Origin: ${origin()}' -H 'Host: 127.0.0.1:${portal!.port}' -d '{"code":"${code}","name":"bot"}' ${origin()}/portal/api/join`;
    // All at once, so the bucket fills however busy the machine is.
    const wrong = await sh(a!, `for i in $(seq 60); do ${join('WRONG1')} & done; wait; echo`, 60_000);
    expect(wrong.out).toContain('429');
    const grab = await sh(a!, `for i in $(seq 4); do ${join('ROOM42')}; done; echo`, 60_000);
    const codes = grab.out.trim().split(/\s+/);
    // Two seats at most for one client; the rest is refused.
    expect(codes.filter((c) => c === '200').length).toBeLessThanOrEqual(2);
    expect(codes.slice(-2)).toEqual(['429', '429']);
    // Another learner, with the right code, gets the seat that is left.
    const other = await http(origin(), '/portal/api/join', {
      method: 'POST',
      headers: headers(''),
      body: JSON.stringify({ code: 'ROOM42', name: 'Cy' }),
    });
    expect(other.status, other.body).toBe(200);
  });

  // Last: it takes the second learner's seat away.
  it.skipIf(CGROUPS.kind === 'none')("removes a seat's cgroup with the seat, a process its learner left running included", async () => {
    const b = shells[1]!;
    const uid = (await sh(b, 'id -u')).out.trim();
    await sh(b, 'nohup sleep 600 >/dev/null 2>&1 &');
    const dirs = CGROUPS.kind === 'none' ? [] : CGROUPS.dirs.map((d) => join(d, `seat-${uid}`));
    for (const d of dirs) expect(readFileSync(join(d, 'cgroup.procs'), 'utf8')).not.toBe('');
    await portal!.workshop.removeSeat(learners[1]!.seat);
    for (const d of dirs) expect(existsSync(d), d).toBe(false);
  });
});
