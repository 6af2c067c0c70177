// Learners on one host, kept apart by the kernel: two seats of the local backend with a Unix user
// each (the portal runs as root), a warm cluster each over the test doubles, and a real shell in
// each seat opened through its runner's terminal socket. From seat 1's shell every way into seat 2
// is tried (its folder, its token, its kubeconfig, its runner's and its shell's environments,
// signals) and must be refused by the kernel, while seat 1's own kubeconfig and workspace work.
// Deleting seat 2 must leave no process of its user behind, even one its shell started with setsid.
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { healthyRules } from '../../test/fixtures/cluster-scenarios.ts';
import { seatStateFiles, useDoubles, type Doubles } from '../../test/fixtures/doubles.ts';
import { http, mustOpen, openShell, sh, type Shell } from '../../test/fixtures/terminal-client.ts';
import { firstServiceScenario } from '../../test/fixtures/first-service-scenario.ts';
import { LocalSeatBackend } from './local-backend.ts';
import { checkReachable, endUserProcesses, SeatUsers } from './seat-users.ts';
import type { SeatStatus } from './seat-backend.ts';

const SEATS = ['s01', 's02'] as const;
const asRoot = process.platform === 'linux' && process.getuid?.() === 0;

describe('seat users', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dplab-reach-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('are given the lowest free number, and a leftover seat keeps its own', () => {
    const users = new SeatUsers(5_000_000, join(dir, 'registry-adopt'));
    users.adopt(5_000_001);
    expect(users.take()).toEqual({ uid: 5_000_000, gid: 5_000_000 });
    expect(users.take().uid).toBe(5_000_002);
    expect(users.owns(5_000_001)).toBe(true);
    expect(users.owns(4_999_999)).toBe(false);
  });

  it('are unique on the host: a second portal never gets a uid the first one holds, and a freed one goes back', async () => {
    const registry = join(dir, 'registry');
    const first = new SeatUsers(5_100_000, registry);
    const second = new SeatUsers(5_100_000, registry);
    const a = first.take();
    const b = second.take();
    expect(a.uid).toBe(5_100_000);
    expect(b.uid).toBe(5_100_001);
    expect(first.take().uid).toBe(5_100_002);
    await first.release(a);
    expect(second.take().uid).toBe(5_100_000);
  });

  it("stay claimed after their portal dies while the seat's folder is theirs, and are never taken back from another live portal", async () => {
    const registry = join(dir, 'registry-restart');
    mkdirSync(registry, { recursive: true });
    const seat = join(dir, 'seat-left');
    mkdirSync(seat);
    // A portal (long dead: pid 2^22+1 is past pid_max's default) left seat-left with uid 5_200_000.
    const dead = 4_194_305;
    chownSync(seat, process.getuid?.() ?? 0, asRoot ? 5_200_000 : (process.getgid?.() ?? 0));
    writeFileSync(join(registry, '5200000'), `${dead}\n${seat}`);
    const other = new SeatUsers(5_200_000, registry);
    if (asRoot) expect(other.take().uid).toBe(5_200_001);
    // Its folder gone, the claim is stale.
    rmSync(seat, { recursive: true });
    expect(new SeatUsers(5_200_000, registry).take().uid).toBe(5_200_000);
    // Held by a live portal (here: our parent), a seat's uid is not adopted.
    writeFileSync(join(registry, '5200009'), `${process.ppid}\n${seat}`);
    expect(new SeatUsers(5_200_000, registry).adopt(5_200_009, seat)).toEqual({ ok: false, holder: process.ppid });
    expect(readFileSync(join(registry, '5200009'), 'utf8')).toBe(`${process.ppid}\n${seat}`);
  });

  it('must be able to cross every folder above theirs, and the refusal names the closed one', () => {
    const closed = join(dir, 'closed');
    mkdirSync(join(closed, 'portal'), { recursive: true });
    chmodSync(dir, 0o711);
    chmodSync(closed, 0o700);
    expect(() => checkReachable([join(closed, 'portal', 'seats')])).toThrow(`${closed} is closed to other users (mode 700)`);
    chmodSync(closed, 0o711);
    // Folders not made yet are made later with the modes the backend sets.
    expect(() => checkReachable([join(closed, 'portal', 'seats', 'later')])).not.toThrow();
  });
});

describe.runIf(asRoot)('seats with a Unix user each (local backend, portal as root)', { timeout: 240_000 }, () => {
  let doubles: Doubles | undefined;
  let backend: LocalSeatBackend | undefined;
  const shells: Shell[] = [];
  let stateDir = '';
  afterAll(async () => {
    shells.forEach((s) => s.close());
    for (const id of SEATS) await backend?.delete(id).catch(() => undefined);
    doubles?.cleanup();
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  it("keep one seat's shell out of another seat's folder, token, kubeconfig and processes", async () => {
    doubles = useDoubles({ rules: [...SEATS.flatMap((s) => healthyRules('iptables', s)), ...firstServiceScenario('iptables').rules] });
    const stateFiles = seatStateFiles(doubles, SEATS);
    const { DPLAB_STATE_DIR: _own, ...toolEnv } = doubles.env;
    stateDir = mkdtempSync(join(tmpdir(), 'dplab-seat-users-'));
    // Seat users cross the folders above their own (checkReachable refuses a 0700 one).
    chmodSync(stateDir, 0o711);
    // The host's own register, as a portal uses it: test files that run at once each get uids of their own.
    const users = new SeatUsers();
    backend = new LocalSeatBackend({
      stateDir,
      seatUsers: users,
      seatEnv: (id) => ({ ...toolEnv, DPLAB_DOUBLE_STATE: stateFiles.get(id)! }),
    });
    const tokens = Object.fromEntries(SEATS.map((id) => [id, randomBytes(16).toString('hex')]));
    for (const id of SEATS) await backend.create({ id, runnerToken: tokens[id]!, warm: ['iptables'] });
    const ready: Record<string, SeatStatus> = {};
    const deadline = Date.now() + 180_000;
    while (Object.keys(ready).length < SEATS.length && Date.now() < deadline) {
      for (const id of SEATS) {
        const s = await backend.status(id);
        expect(s.phase, `${id}: ${s.message}`).not.toBe('failed');
        if (s.phase === 'ready') ready[id] = s;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(Object.keys(ready).sort()).toEqual([...SEATS]);

    const [a, b] = SEATS;
    const dirA = backend.seatDir(a);
    const dirB = backend.seatDir(b);
    const kubeA = join(dirA, 'kube', `dplab-${a}-iptables.yaml`);
    const kubeB = join(dirB, 'kube', `dplab-${b}-iptables.yaml`);
    // Each seat has its own user; its folder is root's and open to that user's group alone.
    const uidA = statSync(dirA).gid;
    const uidB = statSync(dirB).gid;
    expect(uidA).toBeGreaterThanOrEqual(users.base);
    expect(uidB).not.toBe(uidA);
    expect(statSync(dirB).mode & 0o777).toBe(0o710);
    // The warm cluster's kubeconfig was handed to the seat's user when the cluster came up.
    expect(statSync(kubeB).uid).toBe(uidB);
    expect(statSync(kubeB).mode & 0o777).toBe(0o600);

    const open = async (id: string) => {
      const port = Number(new URL(ready[id]!.endpoint!.url).port);
      const shell = mustOpen(
        await openShell(
          port,
          { authorization: `Bearer ${tokens[id]}`, origin: `http://127.0.0.1:${port}`, host: `127.0.0.1:${port}` },
          'cols=200&rows=50&mode=iptables',
        ),
      );
      shells.push(shell);
      await sh(shell, 'true');
      return shell;
    };
    const shellA = await open(a);
    const shellB = await open(b);

    // Seat 1's shell is seat 1's user, with nothing of root left.
    expect((await sh(shellA, 'id -u')).out.trim()).toBe(String(uidA));
    const status = (await sh(shellA, 'grep -E "^(Groups|CapEff|NoNewPrivs):" /proc/self/status')).out;
    expect(status).toMatch(/^Groups:\s*$/m);
    expect(status).toMatch(/^CapEff:\s*0+\s*$/m);
    expect(status).toMatch(/^NoNewPrivs:\s*1\s*$/m);
    // Its own things work: the kubeconfig, the workspace.
    expect(await sh(shellA, 'test "$KUBECONFIG" = ' + kubeA + ' && head -c 200 "$KUBECONFIG" >/dev/null')).toMatchObject({ status: 0 });
    expect(await sh(shellA, 'echo mine > notes.txt && cat notes.txt')).toMatchObject({ out: expect.stringContaining('mine'), status: 0 });
    // The lab's files, which the runner (root) copies in, are the learner's to edit.
    const portA = Number(new URL(ready[a]!.endpoint!.url).port);
    const setup = await http(`http://127.0.0.1:${portA}`, '/api/labs/first-service/setup', {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens[a]}`, origin: `http://127.0.0.1:${portA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'iptables' }),
      timeoutMs: 60_000,
    });
    expect(setup.status, setup.body).toBe(200);
    expect(
      await sh(shellA, 'echo "# mine" >> first-service/web-deployment.yaml && tail -n 1 first-service/web-deployment.yaml'),
    ).toMatchObject({
      out: expect.stringContaining('# mine'),
      status: 0,
    });

    // Seat 2's shell leaves a process behind that outlives the shell (setsid: its own session).
    const shellBPid = Number((await sh(shellB, 'echo $$')).out.trim());
    expect(shellBPid).toBeGreaterThan(1);
    const ttyB = (await sh(shellB, 'tty')).out.trim();
    expect(ttyB).toMatch(/^\/dev\/pts\/\d+$/);
    await sh(shellB, 'setsid sleep 600 </dev/null >/dev/null 2>&1 &');
    const runnerB = backend.pids()[SEATS.indexOf(b)]!;

    // The attacks, from seat 1's shell.
    const attacks = [
      `ls ${join(stateDir, 'seats')}`,
      `ls ${dirB}`,
      `cat ${join(dirB, 'seat.json')}`,
      `cat ${kubeB}`,
      `ls ${join(dirB, 'workspace')}`,
      `cat /proc/${runnerB}/environ`,
      `cat /proc/${shellBPid}/environ`,
      `ls -l /proc/${shellBPid}/cwd/`,
      `kill -0 ${shellBPid}`,
      // Seat 2's terminal: neither read nor written (the runner opened it, as root).
      `timeout 2 cat ${ttyB}`,
      `echo intruder > ${ttyB}`,
      // Its own seat's runner token is root's too.
      `cat ${join(dirA, 'seat.json')}`,
    ];
    for (const attack of attacks) {
      const r = await sh(shellA, attack);
      expect(r.status, `${attack} must fail, printed: ${r.out}`).not.toBe(0);
      expect(r.out, attack).toMatch(/Permission denied|Operation not permitted/);
      expect(r.out, attack).not.toContain(tokens[b]!);
    }

    // Deleting seat 2 ends every process of its user, the setsid one included, and frees nothing early.
    await backend.delete(b);
    expect(await endUserProcesses(uidB, 1_000)).toBe(0);
  });
});
