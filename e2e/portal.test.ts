/**
 * A workshop in Chromium, on the local seat backend over the cluster test doubles: a portal
 * with three warm seats (each its own `dplab serve` process and `dplab-<seat>-iptables`
 * cluster), three learners joining in three browsers, each typing in their own terminal and
 * pressing Check in their own seat, the instructor's dashboard following live; then every
 * way seat A might reach seat B is tried and refused, and "End workshop" deletes every seat's
 * cluster and stops every seat. Run as root (as CI does) each seat's shells are a Unix user of the
 * seat's own, as `dplab portal` makes them there.
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { distDir } from '../scripts/base/paths.ts';
import { requireLab } from '../scripts/labs/registry.ts';
import { LocalSeatBackend } from '../scripts/portal/local-backend.ts';
import { SEAT_UID_BASE, SeatUsers } from '../scripts/portal/seat-users.ts';
import { startPortal, type RunningPortal } from '../scripts/portal/server.ts';
import { healthyRules } from '../test/fixtures/cluster-scenarios.ts';
import { seatStateFiles, useDoubles, type Doubles } from '../test/fixtures/doubles.ts';
import { firstServiceScenario } from '../test/fixtures/first-service-scenario.ts';
import { processAlive } from '../test/fixtures/process-alive.ts';
import { http, openShell } from '../test/fixtures/terminal-client.ts';
import { hasChromium, chromiumNote, launchBrowser, type Browser } from './harness.ts';
import { labOutline } from '../scripts/portal/dashboard.ts';

const SEATS = ['s01', 's02', 's03'];
const LEARNERS = ['Ada', 'Brian', 'Chen'];
/** Screenshots a person can open: $TMPDIR/dplab-portal-join.png and dplab-portal-dashboard.png. */
const SHOTS = tmpdir();
const seatUsers = process.platform === 'linux' && process.getuid?.() === 0;
const step = (id: string) => `dplab-lab .dplab-step[data-step="${id}"]`;

describe.skipIf(!hasChromium)(`a workshop on the portal${chromiumNote}`, { timeout: 180_000 }, () => {
  let doubles: Doubles;
  let backend: LocalSeatBackend;
  let portal: RunningPortal;
  const learners: Browser[] = [];
  let instructor: Browser;
  const tokens: string[] = [];
  let pids: number[] = [];

  beforeAll(async () => {
    // One scenario for every seat; each seat's runner gets its own state file, so `created` and
    // the lab's step flags are per seat, and one call log sees every seat's commands.
    doubles = useDoubles({ rules: [...SEATS.flatMap((s) => healthyRules('iptables', s)), ...firstServiceScenario('iptables').rules] });
    const stateFiles = seatStateFiles(doubles, SEATS);
    const { DPLAB_STATE_DIR: _own, ...toolEnv } = doubles.env;
    const stateDir = mkdtempSync(join(tmpdir(), 'dplab-portal-'));
    if (seatUsers) {
      // The seats' users cross the folder above theirs, and their kubectl (the double) keeps its
      // log and state in the doubles' folder.
      chmodSync(stateDir, 0o711);
      chmodSync(doubles.dir, 0o777);
      for (const f of readdirSync(doubles.dir)) chmodSync(join(doubles.dir, f), 0o666);
    }
    backend = new LocalSeatBackend({
      stateDir,
      seatEnv: (id) => ({ ...toolEnv, DPLAB_DOUBLE_STATE: stateFiles.get(id) ?? join(doubles.dir, 'state.json') }),
      ...(seatUsers ? { seatUsers: new SeatUsers() } : {}),
    });
    const lab = requireLab('first-service');
    portal = await startPortal({
      backend,
      lab: labOutline(lab),
      siteDir: distDir,
      port: 0,
      seats: 3,
      maxSeats: 3,
      warm: ['iptables'],
      timing: { activityMs: 1_000, clustersMs: 2_000 },
    });
    await until(
      () => portal.workshop.state().seats.filter((s) => s.phase === 'ready').length === 3,
      90_000,
      () => JSON.stringify(portal.workshop.state().seats.map((s) => [s.id, s.phase, s.message])),
    );
    pids = backend.pids();
    expect(pids).toHaveLength(3);
    instructor = await launchBrowser();
    for (let i = 0; i < 3; i++) learners.push(await launchBrowser());
  });
  afterAll(async () => {
    for (const b of [...learners, instructor]) await b?.close();
    if (portal) {
      await portal.workshop.end().catch(() => undefined);
      await portal.close();
    }
    doubles?.cleanup();
  });

  const dashboard = () => instructor.page;
  const cell = (seat: string, stepId: string) => dashboard().locator(`tr[data-seat="${seat}"] td[data-step="${stepId}"] .cell`);

  it('the instructor’s dashboard shows three ready seats with their warm clusters', async () => {
    await dashboard().goto(portal.dashboardUrl);
    await dashboard().locator('tr[data-seat]').nth(2).waitFor();
    expect(await dashboard().locator('#code').textContent()).toBe(portal.code);
    // The instructor token left the address bar.
    expect(dashboard().url()).not.toContain('#token');
    await expect.poll(() => dashboard().locator('tr[data-seat] .phase[data-phase="ready"]').count(), { timeout: 10_000 }).toBe(3);
    await expect
      .poll(() => dashboard().locator('tr[data-seat="s01"] td').nth(3).textContent(), { timeout: 10_000 })
      .toBe('iptables: ready');
  });

  it('three learners join with the code and a name and land in the lab, each in a seat of their own', async () => {
    for (let i = 0; i < 3; i++) {
      const page = learners[i].page;
      await page.goto(portal.joinUrl);
      if (i === 0) await page.screenshot({ path: join(SHOTS, 'dplab-portal-join.png') });
      await page.fill('#code', portal.code.toLowerCase());
      await page.fill('#name', LEARNERS[i]);
      await page.click('button[type="submit"]');
      await page.waitForURL(/\/labs\/first-service\/$/);
      tokens.push((await page.evaluate(() => localStorage.getItem('dplab.token')))!);
      await page.waitForSelector('dplab-terminal[data-state="open"]', { timeout: 30_000 });
    }
    expect(new Set(tokens).size).toBe(3);
    await expect
      .poll(() => dashboard().locator('tr[data-seat] td:nth-child(2)').allTextContents())
      .toEqual(expect.arrayContaining(LEARNERS.map((n) => expect.stringContaining(n))));
  });

  const seatOf = (i: number) => portal.workshop.state().seats.find((s) => s.learner === LEARNERS[i])!.id;

  async function typeInTerminal(page: Page, text: string, expectInOutput: string) {
    await page.locator('dplab-terminal:not([node]) .xterm').click();
    await page.keyboard.type(text);
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.locator('dplab-terminal:not([node]) .xterm-rows').textContent(), { timeout: 15_000 })
      .toContain(expectInOutput);
  }

  it('each works in their own terminal and checks in their own seat; the dashboard follows live', async () => {
    const [ada, brian, chen] = learners.map((b) => b.page);
    // Ada and Chen deploy; the command runs in their seat's shell, against their seat's cluster.
    await typeInTerminal(ada, 'kubectl apply -f first-service/web-deployment.yaml && echo "SEAT=$DPLAB_SEAT"', `SEAT=${seatOf(0)}`);
    // As root, Ada's shell is her seat's own user, not root.
    if (seatUsers) await typeInTerminal(ada, 'echo "UID=$(id -u)"', `UID=${String(SEAT_UID_BASE).slice(0, 7)}`);
    await typeInTerminal(chen, 'kubectl apply -f first-service/web-deployment.yaml && echo "SEAT=$DPLAB_SEAT"', `SEAT=${seatOf(2)}`);
    // Brian looks around and checks too early, three times.
    await typeInTerminal(brian, 'echo "SEAT=$DPLAB_SEAT"', `SEAT=${seatOf(1)}`);
    const started = Date.now();
    await ada.locator(`${step('deploy-web')} [data-action="check"]`).click();
    await ada.locator(`${step('deploy-web')} .dplab-result[data-status="pass"]`).waitFor({ timeout: 20_000 });
    await expect.poll(() => cell(seatOf(0), 'deploy-web').getAttribute('data-status'), { timeout: 5_000, interval: 50 }).toBe('passed');
    const seenAfterMs = Date.now() - started;
    for (let n = 0; n < 3; n++) {
      await brian.locator(`${step('deploy-web')} [data-action="check"]`).click();
      await brian.locator(`${step('deploy-web')} .dplab-result[data-status="fail"]`).waitFor({ timeout: 20_000 });
      await expect.poll(() => cell(seatOf(1), 'deploy-web').textContent(), { timeout: 5_000 }).toBe(n ? `failing ×${n + 1}` : 'failing');
    }
    await chen.locator(`${step('deploy-web')} [data-action="check"]`).click();
    await chen.locator(`${step('deploy-web')} .dplab-result[data-status="pass"]`).waitFor({ timeout: 20_000 });
    await expect.poll(() => cell(seatOf(2), 'deploy-web').getAttribute('data-status'), { timeout: 5_000 }).toBe('passed');
    // Brian's row: failing with the check's own words, and stuck.
    const brianRow = dashboard().locator(`tr[data-seat="${seatOf(1)}"]`);
    expect(await brianRow.locator('td[data-step="deploy-web"] .why').textContent()).toContain(
      'There is no Deployment web in namespace lab-first-service yet.',
    );
    expect(await brianRow.getAttribute('data-stuck')).toBe('');
    expect(await brianRow.locator('td.stuck').textContent()).toMatch(/^3 failing checks in a row on "/);
    // Nobody else's step moved.
    expect(await cell(seatOf(0), 'expose-web').getAttribute('data-status')).toBe('not-started');
    expect(await cell(seatOf(1), 'deploy-web').getAttribute('data-status')).toBe('failing');
    console.log(`[portal e2e] Check → dashboard shows it: ${seenAfterMs} ms (including the check itself)`);
    await dashboard().screenshot({ path: join(SHOTS, 'dplab-portal-dashboard.png'), fullPage: true });
  });

  it('the broadcast reaches every learner’s page', async () => {
    await dashboard().fill('#broadcast input[name="message"]', 'Five minutes left on step 1');
    await dashboard().click('#broadcast button[type="submit"]');
    for (const b of learners)
      await expect
        .poll(() => b.page.locator('#dplab-portal-banner').textContent(), { timeout: 10_000 })
        .toContain('Five minutes left on step 1');
  });

  it('the instructor watches a seat’s terminal read-only, live', async () => {
    const ada = learners[0].page;
    await dashboard().click(`tr[data-seat="${seatOf(0)}"] [data-watch]`);
    const screen = dashboard().locator('#watch-screen');
    // The replay brings what Ada typed before the viewer opened ...
    await expect.poll(() => screen.textContent(), { timeout: 15_000 }).toContain(`SEAT=${seatOf(0)}`);
    // ... and what she types now arrives as she types it.
    await typeInTerminal(ada, 'echo "WATCHED-$((2+3))"', 'WATCHED-5');
    await expect.poll(() => screen.textContent(), { timeout: 10_000 }).toContain('WATCHED-5');
    expect(await screen.textContent()).not.toContain(`SEAT=${seatOf(1)}`);
    await dashboard().screenshot({ path: join(SHOTS, 'dplab-portal-watch.png'), fullPage: true });
    await dashboard().click('#watch-close');
  });

  it('seat A reaches nothing of seat B: swapped tokens, guessed ids, direct runner ports, instructor routes', async () => {
    const origin = portal.origin;
    const [a, b] = [0, 1].map(seatOf);
    const aToken = tokens[0];
    const asA = { authorization: `Bearer ${aToken}` };
    const aSeatStatus = portal.workshop.state().seats;
    // A's token always lands in A's seat, whatever else the request names.
    for (const path of [`/api/activity?seat=${b}`, `/api/activity`]) {
      const r = await http(origin, path, { headers: { ...asA, 'x-seat': b, cookie: `seat=${b}` } });
      expect(r.status).toBe(200);
      const passed = JSON.parse(r.body).progress.labs['first-service']?.passed?.iptables ?? [];
      expect(passed).toEqual(['deploy-web']);
    }
    const bActivity = JSON.parse((await http(origin, '/api/activity', { headers: { authorization: `Bearer ${tokens[1]}` } })).body);
    expect(bActivity.progress.labs['first-service']?.passed?.iptables ?? []).toEqual([]);
    // Guessed tokens: a seat id, the instructor's link without its token, nothing.
    for (const guess of [b, `dplab.token.${b}`, 'x'.repeat(32)])
      expect((await http(origin, '/api/activity', { headers: { authorization: `Bearer ${guess}` } })).status).toBe(401);
    expect((await http(origin, '/api/activity', { headers: { cookie: `dplab.token=${tokens[1]}` } })).status).toBe(401);
    // The learner token is not a seat runner's token: straight to B's runner (its port) it is refused, API and terminal.
    const bEndpoint = (await backend.status(b)).endpoint!;
    const bPort = Number(new URL(bEndpoint.url).port);
    for (const t of [aToken, tokens[1]]) {
      expect((await http(bEndpoint.url, '/api/activity', { headers: { authorization: `Bearer ${t}` } })).status).toBe(401);
      const shell = await openShell(bPort, { origin: bEndpoint.url }, undefined, ['dplab.v1', `dplab.token.${t}`]);
      expect('refused' in shell && shell.refused).toBe(401);
    }
    // Through the portal, A's terminal socket opens A's shell only.
    const portalPort = portal.port;
    const own = await openShell(portalPort, { origin }, undefined, ['dplab.v1', `dplab.token.${aToken}`]);
    expect('ws' in own).toBe(true);
    if ('ws' in own) {
      await own.waitFor('"type":"ready"', 15_000);
      own.type('echo "I-AM-$DPLAB_SEAT"\r');
      await own.waitFor(`I-AM-${a}`, 15_000);
      own.close();
    }
    // A foreign page cannot open it with A's token either (Origin).
    const foreign = await openShell(portalPort, { origin: 'http://evil.example' }, undefined, ['dplab.v1', `dplab.token.${aToken}`]);
    expect('refused' in foreign && foreign.refused).toBe(403);
    // Instructor routes with a learner token: 403; with none or a guess: 401.
    expect((await http(origin, '/portal/api/state', { headers: asA })).status).toBe(403);
    expect((await http(origin, '/portal/api/end', { method: 'POST', headers: { ...asA, origin } })).status).toBe(403);
    expect(
      (
        await http(origin, '/portal/api/broadcast', {
          method: 'POST',
          headers: { ...asA, origin, 'content-type': 'application/json' },
          body: '{"message":"x"}',
        })
      ).status,
    ).toBe(403);
    const watch = await new Promise<number>((resolve) => {
      void import('ws').then(({ default: WebSocket }) => {
        const ws = new WebSocket(`ws://127.0.0.1:${portalPort}/portal/api/seats/${b}/watch`, ['dplab.v1', `dplab.token.${aToken}`], {
          headers: { origin },
        });
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('open', () => resolve(101));
        ws.on('error', () => undefined);
      });
    });
    expect(watch).toBe(403);
    // Nothing above changed anyone's seat.
    expect(portal.workshop.state().seats.map((s) => s.learner)).toEqual(aSeatStatus.map((s) => s.learner));
  });

  it('joining is rate-limited, and a wrong code is refused', async () => {
    const wrong = await http(portal.origin, '/portal/api/join', {
      method: 'POST',
      headers: { origin: portal.origin, 'content-type': 'application/json' },
      body: JSON.stringify({ code: 'WRONG1', name: 'Mallory' }),
    });
    expect(wrong.status).toBe(401);
    // The workshop is full (3 of 3): a right code gets a clear 503, not a seat.
    const full = await http(portal.origin, '/portal/api/join', {
      method: 'POST',
      headers: { origin: portal.origin, 'content-type': 'application/json' },
      body: JSON.stringify({ code: portal.code, name: 'Dana' }),
    });
    expect(full.status).toBe(503);
    expect(JSON.parse(full.body).error.message).toMatch(/full/);
    // 40 guesses at once: a burst of 20 passes to be refused as wrong (401), the rest are held
    // back (429) but for the few the limit refills (two a second) while they arrive. One after
    // another on a busy machine, the refill kept pace and the last ones were 401s.
    const statuses = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const res = await http(portal.origin, '/portal/api/join', {
          method: 'POST',
          headers: { origin: portal.origin, 'content-type': 'application/json' },
          body: JSON.stringify({ code: `GUESS${i}`, name: 'Mallory' }),
        });
        return res.status;
      }),
    );
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(10);
  });

  it('End workshop deletes every seat’s cluster through its runner, then stops every seat and removes its files', async () => {
    const dirs = SEATS.map((s) => backend.seatDir(s));
    expect(dirs.every((d) => existsSync(d))).toBe(true);
    dashboard().once('dialog', (d) => void d.accept());
    await dashboard().click('#end');
    await expect.poll(() => portal.workshop.state().ended, { timeout: 60_000, interval: 250 }).toBe(true);
    const lines = doubles.commandLines();
    for (const s of SEATS) expect(lines.some((l) => l.startsWith(`kind delete cluster --name dplab-${s}-iptables `))).toBe(true);
    // No seat's cluster was ever made or deleted under another seat's name.
    expect(lines.filter((l) => /^kind (create|delete) cluster --name dplab-iptables /.test(l))).toEqual([]);
    for (const pid of pids) expect(processAlive(pid)).toBe(false);
    expect(dirs.some((d) => existsSync(d))).toBe(false);
    expect(backend.pids()).toEqual([]);
    // The learners' tokens are dead, and their pages say the workshop ended.
    expect((await http(portal.origin, '/api/activity', { headers: { authorization: `Bearer ${tokens[0]}` } })).status).toBe(401);
    await expect.poll(() => dashboard().locator('#lab').textContent(), { timeout: 5_000 }).toContain('ended');
  });
});

async function until(ok: () => boolean, ms: number, why: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${why()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
