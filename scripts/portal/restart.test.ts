// A portal killed without "End workshop" leaves its seats behind. Started again on the same
// folder it takes every seat back (issue 36, item 6): workspace, progress, learner token, seat
// user and clusters, its runner started again. Seats of which nothing was kept (a portal without
// a state folder) nobody can reach again: the next portal removes them, clusters first. Over the
// cluster test doubles.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { distDir, projectRoot } from '../base/paths.ts';
import { requireLab } from '../labs/registry.ts';
import { healthyRules } from '../../test/fixtures/cluster-scenarios.ts';
import { seatStateFiles, useDoubles, type Doubles } from '../../test/fixtures/doubles.ts';
import { processAlive } from '../../test/fixtures/process-alive.ts';
import { firstServiceScenario } from '../../test/fixtures/first-service-scenario.ts';
import { http, mustOpen, openShell, sh, type Shell } from '../../test/fixtures/terminal-client.ts';
import { LocalSeatBackend } from './local-backend.ts';
import { processesOf, SEAT_UID_REGISTRY, SeatUsers } from './seat-users.ts';
import { startPortal, type RunningPortal } from './server.ts';
import { labOutline } from './dashboard.ts';

const SEATS = ['s01', 's02'];
const asRoot = process.platform === 'linux' && process.getuid?.() === 0;

/** A portal in a process of its own (test/fixtures/portal-child.ts), once it says every seat is ready: its seats' runner pids. */
interface Ready {
  pids: number[];
  port: number;
  code: string;
}

async function portalChild(config: string): Promise<{ child: ChildProcess; exited: Promise<unknown> } & Ready> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'test/fixtures/portal-child.ts'), config], {
    cwd: projectRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise((r) => child.once('exit', r));
  const deadline = Date.now() + 120_000;
  while (!/^READY /m.test(out) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  const ready = /^READY (.*)$/m.exec(out);
  expect(ready, out.slice(-2000)).not.toBeNull();
  return { child, exited, ...(JSON.parse(ready![1]) as Ready) };
}

describe('a portal killed without ending its workshop', { timeout: 180_000 }, () => {
  let doubles: Doubles | undefined;
  let portal: RunningPortal | undefined;
  afterAll(async () => {
    if (portal) {
      await portal.workshop.end().catch(() => undefined);
      await portal.close();
    }
    doubles?.cleanup();
  });

  it('without a state folder: leaves seats whose runners died with it, which the next portal finds and removes through the CLI', async () => {
    doubles = useDoubles({ rules: SEATS.flatMap((s) => healthyRules('iptables', s)) });
    const stateFiles = seatStateFiles(doubles, SEATS);
    const { DPLAB_STATE_DIR: _own, ...toolEnv } = doubles.env;
    const seatEnv = Object.fromEntries(SEATS.map((id) => [id, { ...toolEnv, DPLAB_DOUBLE_STATE: stateFiles.get(id)! }]));
    const stateDir = mkdtempSync(join(tmpdir(), 'dplab-portal-restart-'));
    const config = join(stateDir, 'child.json');
    writeFileSync(config, JSON.stringify({ stateDir, seats: SEATS.length, seatEnv, keep: false }));

    const { child, exited, pids } = await portalChild(config);
    expect(pids).toHaveLength(2);

    child.kill('SIGKILL');
    await exited;
    // The runners die with their portal (a parent-death signal); their clusters and folders stay.
    const deadline2 = Date.now() + 10_000;
    while (pids.some((p) => processAlive(p)) && Date.now() < deadline2) await new Promise((r) => setTimeout(r, 50));
    expect(pids.filter((p) => processAlive(p))).toEqual([]);
    expect(doubles.commandLines().filter((l) => l.startsWith('kind create cluster'))).toHaveLength(2);

    const backend = new LocalSeatBackend({ stateDir, seatEnv: (id) => seatEnv[id] ?? {} });
    expect(backend.leftovers()).toEqual(SEATS);
    expect((await backend.list()).map((s) => [s.id, s.phase])).toEqual([
      ['s01', 'failed'],
      ['s02', 'failed'],
    ]);
    const notes: string[] = [];
    const lab = requireLab('first-service');
    portal = await startPortal({
      backend,
      lab: labOutline(lab),
      siteDir: distDir,
      port: 0,
      seats: 0,
      maxSeats: 2,
      note: (l) => notes.push(l),
    });
    expect(notes).toEqual(['Removed 2 seat(s) an earlier portal left: s01, s02.']);
    const deletes = doubles.commandLines().filter((l) => l.startsWith('kind delete cluster'));
    expect(deletes.some((l) => l.includes('dplab-s01-iptables'))).toBe(true);
    expect(deletes.some((l) => l.includes('dplab-s02-iptables'))).toBe(true);
    for (const s of SEATS) expect(existsSync(backend.seatDir(s))).toBe(false);
    expect(await backend.list()).toEqual([]);
  });
});

describe.runIf(asRoot)('a portal with seat users killed with SIGKILL (issue 36)', { timeout: 180_000 }, () => {
  it("takes its runners and every process of its seat users with it, a learner's setsid one included", async () => {
    const doubles = useDoubles({ rules: [] });
    const stateDir = mkdtempSync(join(tmpdir(), 'dplab-portal-kill-'));
    chmodSync(stateDir, 0o711);
    // The host's own register, so this portal's uids are not another test file's.
    const registry = SEAT_UID_REGISTRY;
    const { DPLAB_STATE_DIR: _own, ...toolEnv } = doubles.env;
    const config = join(stateDir, 'child.json');
    writeFileSync(config, JSON.stringify({ stateDir, seats: 1, seatEnv: { s01: toolEnv }, seatUsersRegistry: registry, warm: [] }));
    const { child, exited, pids } = await portalChild(config);
    try {
      const uid = statSync(join(stateDir, 'seats', 's01')).gid;
      expect(readFileSync(join(registry, String(uid)), 'utf8').split('\n')[0]).toBe(String(child.pid));
      // What a learner leaves behind: a process of the seat's user in a session of its own.
      const left = spawn('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', 'setsid', 'sleep', '600'], {
        detached: true,
        stdio: 'ignore',
      });
      left.unref();
      while (!processesOf(uid).length) await new Promise((r) => setTimeout(r, 50));

      child.kill('SIGKILL');
      await exited;
      const end = Date.now() + 15_000;
      while ((pids.some((p) => processAlive(p)) || processesOf(uid).length) && Date.now() < end)
        await new Promise((r) => setTimeout(r, 100));
      expect(pids.filter((p) => processAlive(p))).toEqual([]);
      expect(processesOf(uid)).toEqual([]);
    } finally {
      child.kill('SIGKILL');
      doubles.cleanup();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});

describe('a portal killed with SIGKILL and started again on its folder (issue 36, item 6)', { timeout: 300_000 }, () => {
  let child: ChildProcess | undefined;
  let doubles: Doubles | undefined;
  let stateDir = '';
  const shells: Shell[] = [];
  afterAll(async () => {
    shells.forEach((s) => s.close());
    child?.kill('SIGKILL');
    // The watchdog ends the seat users' processes; the folders and the register's claims go with the seats.
    if (stateDir) {
      const users = asRoot ? new SeatUsers() : undefined;
      for (const id of SEATS) {
        const dir = join(stateDir, 'seats', id);
        const uid = existsSync(dir) ? statSync(dir).gid : -1;
        if (users?.owns(uid)) await users.release({ uid, gid: uid });
      }
      rmSync(stateDir, { recursive: true, force: true });
    }
    doubles?.cleanup();
  });

  it("takes every seat back: its learner's token, workspace, progress, seat user and cluster, its shell answering again", async () => {
    doubles = useDoubles({ rules: [...SEATS.flatMap((s) => healthyRules('iptables', s)), ...firstServiceScenario('iptables').rules] });
    const stateFiles = seatStateFiles(doubles, SEATS);
    // Step 1 is done on each seat's (double) cluster, so its check passes and progress is written.
    for (const s of SEATS) writeFileSync(stateFiles.get(s)!, JSON.stringify({ seat: s, s1: '1' }));
    const { DPLAB_STATE_DIR: _own, ...toolEnv } = doubles.env;
    const seatEnv = Object.fromEntries(SEATS.map((id) => [id, { ...toolEnv, DPLAB_DOUBLE_STATE: stateFiles.get(id)! }]));
    stateDir = mkdtempSync(join(tmpdir(), 'dplab-portal-readopt-'));
    chmodSync(stateDir, 0o711);
    const config = join(stateDir, 'child.json');
    const write = (port?: number) =>
      writeFileSync(
        config,
        JSON.stringify({ stateDir, seats: SEATS.length, seatEnv, ...(asRoot ? { seatUsersRegistry: SEAT_UID_REGISTRY } : {}), port }),
      );
    write();
    const first = await portalChild(config);
    child = first.child;
    const origin = `http://127.0.0.1:${first.port}`;
    const headers = (token: string) => ({
      authorization: `Bearer ${token}`,
      origin,
      host: `127.0.0.1:${first.port}`,
      'content-type': 'application/json',
    });

    // Two learners join, pass step 1 through the portal, and leave a file in their workspace.
    const learners: { name: string; token: string; seat: string; uid: string; marker: string }[] = [];
    for (const name of ['Ada', 'Bob']) {
      const joined = await http(origin, '/portal/api/join', {
        method: 'POST',
        headers: headers(''),
        body: JSON.stringify({ code: first.code, name }),
      });
      expect(joined.status, joined.body).toBe(200);
      const { token, seat } = JSON.parse(joined.body) as { token: string; seat: string };
      const check = await http(origin, '/api/labs/first-service/steps/deploy-web/check', {
        method: 'POST',
        headers: headers(token),
        body: JSON.stringify({ mode: 'iptables' }),
        timeoutMs: 60_000,
      });
      expect(check.status, check.body).toBe(200);
      expect((JSON.parse(check.body) as { status: string }).status).toBe('pass');
      const shell = mustOpen(await openShell(first.port, headers(token), 'cols=200&rows=50&mode=iptables'));
      shells.push(shell);
      const marker = `work-of-${name}-${process.pid}`;
      expect(await sh(shell, `echo ${marker} > notes.txt && cat notes.txt`)).toMatchObject({
        out: expect.stringContaining(marker),
        status: 0,
      });
      learners.push({ name, token, seat, uid: (await sh(shell, 'id -u')).out.trim(), marker });
    }
    expect(learners.map((l) => l.seat).sort()).toEqual([...SEATS]);
    if (asRoot) expect(new Set(learners.map((l) => l.uid)).size).toBe(2);

    // The crash.
    child.kill('SIGKILL');
    await first.exited;
    const gone = Date.now() + 15_000;
    while (first.pids.some((p) => processAlive(p)) && Date.now() < gone) await new Promise((r) => setTimeout(r, 50));
    expect(first.pids.filter((p) => processAlive(p))).toEqual([]);
    shells.splice(0).forEach((s) => s.close());
    // What the portal keeps holds tokens: its user's alone.
    const kept = join(stateDir, 'workshop');
    expect(statSync(kept).mode & 0o777).toBe(0o700);
    for (const id of SEATS) expect(statSync(join(kept, 'seats', `${id}.json`)).mode & 0o777).toBe(0o600);
    if (asRoot) {
      // A learner of one seat reaching for what the portal kept: their neighbour's learner and runner tokens.
      const [ada, bob] = learners;
      for (const path of [join(kept, 'seats', `${bob!.seat}.json`), join(kept, 'workshop.json'), kept]) {
        const r = spawnSync(
          'setpriv',
          [`--reuid=${ada!.uid}`, `--regid=${ada!.uid}`, '--clear-groups', 'sh', '-c', `cat "$1" || ls "$1"`, 'sh', path],
          {
            encoding: 'utf8',
          },
        );
        expect(r.status, path).not.toBe(0);
        expect(`${r.stdout}${r.stderr}`, path).toMatch(/Permission denied/);
        expect(`${r.stdout}${r.stderr}`).not.toContain(bob!.token);
      }
      // Meanwhile another workshop on the host asks for a seat user: it never gets one of these seats' uids.
      const other = new SeatUsers();
      const taken = other.take(join(stateDir, 'elsewhere'));
      try {
        expect(learners.map((l) => l.uid)).not.toContain(String(taken.uid));
      } finally {
        await other.release(taken);
      }
    }

    write(first.port);
    const again = await portalChild(config);
    child = again.child;
    expect(again.code).toBe(first.code);
    expect(again.pids).toHaveLength(SEATS.length);
    for (const l of learners) {
      // The learner's page, unchanged, with the token it kept.
      const me = await http(origin, '/portal/api/me', { headers: headers(l.token) });
      expect(me.status, me.body).toBe(200);
      expect(JSON.parse(me.body)).toMatchObject({ seat: l.seat, name: l.name, phase: 'ready' });
      const progress = await http(origin, '/api/progress', { headers: headers(l.token) });
      expect(progress.status, progress.body).toBe(200);
      expect(JSON.parse(progress.body).labs['first-service'].passed.iptables).toContain('deploy-web');
      const clusters = await http(origin, '/api/clusters', { headers: headers(l.token) });
      expect(clusters.status, clusters.body).toBe(200);
      expect(JSON.parse(clusters.body).clusters).toEqual(
        expect.arrayContaining([expect.objectContaining({ mode: 'iptables', state: 'ready' })]),
      );
      const shell = mustOpen(await openShell(again.port, headers(l.token), 'cols=200&rows=50&mode=iptables'));
      shells.push(shell);
      expect((await sh(shell, 'cat notes.txt')).out).toContain(l.marker);
      expect((await sh(shell, 'id -u')).out.trim()).toBe(l.uid);
      if (asRoot) expect(readFileSync(join(SEAT_UID_REGISTRY, l.uid), 'utf8').split('\n')[0]).toBe(String(child.pid));
    }
  });
});
