// A portal killed without "End workshop" leaves its seats' runners and clusters behind; the next
// portal on the same folder must find them and remove them (clusters first) before it makes seats
// of its own, whose ids would otherwise collide with theirs. Over the cluster test doubles.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { distDir, projectRoot } from '../base/paths.ts';
import { requireLab } from '../labs/registry.ts';
import { healthyRules } from '../../test/fixtures/cluster-scenarios.ts';
import { seatStateFiles, useDoubles, type Doubles } from '../../test/fixtures/doubles.ts';
import { processAlive } from '../../test/fixtures/process-alive.ts';
import { LocalSeatBackend } from './local-backend.ts';
import { processesOf, SEAT_UID_REGISTRY } from './seat-users.ts';
import { startPortal, type RunningPortal } from './server.ts';
import { labOutline } from './dashboard.ts';

const SEATS = ['s01', 's02'];

/** A portal in a process of its own (test/fixtures/portal-child.ts), once it says every seat is ready: its seats' runner pids. */
async function portalChild(config: string): Promise<{ child: ChildProcess; exited: Promise<unknown>; pids: number[] }> {
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
  return { child, exited, pids: (JSON.parse(ready![1]) as { pids: number[] }).pids };
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

  it('leaves seats whose runners died with it, which the next portal finds and removes through the CLI', async () => {
    doubles = useDoubles({ rules: SEATS.flatMap((s) => healthyRules('iptables', s)) });
    const stateFiles = seatStateFiles(doubles, SEATS);
    const { DPLAB_STATE_DIR: _own, ...toolEnv } = doubles.env;
    const seatEnv = Object.fromEntries(SEATS.map((id) => [id, { ...toolEnv, DPLAB_DOUBLE_STATE: stateFiles.get(id)! }]));
    const stateDir = mkdtempSync(join(tmpdir(), 'dplab-portal-restart-'));
    const config = join(stateDir, 'child.json');
    writeFileSync(config, JSON.stringify({ stateDir, seats: SEATS.length, seatEnv }));

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

const asRoot = process.platform === 'linux' && process.getuid?.() === 0;

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
      expect(readFileSync(join(registry, String(uid)), 'utf8')).toBe(String(child.pid));
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
