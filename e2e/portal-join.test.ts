/**
 * Joining while the seat is still being made, in Chromium: on a cluster a seat is a pod that
 * takes seconds to a minute to schedule and start. The learner waits on the join page, which
 * says what the seat waits for in the backend's own words, and goes to the lab only once the
 * seat is ready; a seat that cannot start says why there, with the button back. Found on a real
 * cluster: the page went straight to the lab, whose runner did not answer yet, and stayed broken.
 * A seat whose runner stops answering sends the learner to the instructor, not to `npm start`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distDir } from '../scripts/base/paths.ts';
import type { SeatBackend, SeatSpec, SeatStatus } from '../scripts/portal/seat-backend.ts';
import { startPortal, type RunningPortal } from '../scripts/portal/server.ts';
import { chromiumNote, hasChromium, launchBrowser, type Browser } from './harness.ts';

const WAITING = 'Starting the seat: waiting for dind (ContainerCreating), runner (ContainerCreating).';

/** Seats stay pending with the pod's words until the test lets them go ready, or fail. */
class GatedBackend implements SeatBackend {
  readonly kind = 'kubernetes' as const;
  readonly outcome = new Map<string, 'pending' | 'ready' | 'failed'>();
  async create(spec: SeatSpec): Promise<SeatStatus> {
    this.outcome.set(spec.id, 'pending');
    return this.status(spec.id);
  }
  async resume(spec: SeatSpec): Promise<SeatStatus> {
    return this.status(spec.id);
  }
  async status(id: string): Promise<SeatStatus> {
    const o = this.outcome.get(id);
    if (o === 'ready') return { id, phase: 'ready', endpoint: { url: 'http://127.0.0.1:9', host: '127.0.0.1:9' } };
    if (o === 'failed')
      return { id, phase: 'failed', message: 'The seat pod cannot pull the image r.example/runner:1 (manifest unknown).' };
    return o ? { id, phase: 'pending', message: WAITING } : { id, phase: 'deleted' };
  }
  async list(): Promise<SeatStatus[]> {
    return Promise.all([...this.outcome.keys()].map((id) => this.status(id)));
  }
  async delete(id: string): Promise<void> {
    this.outcome.delete(id);
  }
}

describe.skipIf(!hasChromium)(`joining while the seat is being made${chromiumNote}`, { timeout: 60_000 }, () => {
  const backend = new GatedBackend();
  let portal: RunningPortal;
  let browser: Browser;

  beforeAll(async () => {
    const lab = { id: 'first-service', title: 'Your first Service', steps: [{ id: 'deploy-web', title: 'Run three web pods' }] };
    portal = await startPortal({ backend, lab, siteDir: distDir, port: 0, code: 'WAIT42', timing: { activityMs: 60_000 } });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  async function join(name: string) {
    const page = browser.page;
    await page.goto(portal.joinUrl);
    await page.fill('#code', 'wait42');
    await page.fill('#name', name);
    await page.click('button[type="submit"]');
    return page;
  }

  it('waits on the join page, saying what for, and opens the lab once the seat is ready', async () => {
    const page = await join('Ada');
    await expect.poll(() => page.locator('#progress').textContent(), { timeout: 10_000 }).toBe(`Preparing your seat: ${WAITING}`);
    expect(await page.locator('button[type="submit"]').textContent()).toBe('Preparing your seat…');
    // Still here after a few polls: nothing sent the learner on.
    await page.waitForTimeout(2_500);
    expect(new URL(page.url()).pathname).toBe('/portal/join');
    backend.outcome.set('s01', 'ready');
    await page.waitForURL(/\/labs\/first-service\/$/, { timeout: 10_000 });
  });

  it('a seat whose runner does not answer: the lab page sends the learner to the instructor, not to `npm start`', async () => {
    // s01 is ready at an address where nothing listens, as when a seat's runner dies mid-class.
    const page = browser.page;
    expect(new URL(page.url()).pathname).toBe('/labs/first-service/');
    const terminal = page.locator('dplab-terminal:not([node])');
    await terminal.and(page.locator('[data-state="unavailable"]')).waitFor({ timeout: 20_000 });
    // The state is set before xterm draws the words (on a busy machine a frame or more later).
    const said = () =>
      terminal
        .locator('.xterm-rows')
        .textContent()
        .then((t) => t?.replace(/\u00a0/g, ' ') ?? '');
    await expect.poll(said, { timeout: 10_000 }).toContain('Your workshop seat is not answering. Tell your instructor');
    expect(await said()).not.toContain('npm start');
    const panel = page.locator('.dplab-ws-bar .dplab-cluster:not([hidden]) dplab-cluster-panel');
    // The portal's own 502 (nothing answers at the seat's address) reads as the seat being down,
    // not as an error the runner sent.
    await expect
      .poll(() => panel.textContent(), { timeout: 10_000 })
      .toContain('Your workshop seat is not answering. Tell your instructor');
    expect(await panel.textContent()).not.toContain('npm start');
    expect(await panel.textContent()).not.toContain('The runner answered with an error');
  });

  it('a seat that cannot start says why on the join page, and the button comes back', async () => {
    await browser.page.evaluate(() => localStorage.clear());
    const page = await join('Brian');
    await expect.poll(() => page.locator('#progress').textContent(), { timeout: 10_000 }).toContain('Preparing your seat');
    backend.outcome.set('s02', 'failed');
    await expect
      .poll(() => page.locator('#error').textContent(), { timeout: 10_000 })
      .toBe('Your seat could not start: The seat pod cannot pull the image r.example/runner:1 (manifest unknown). Tell the instructor.');
    expect(await page.locator('#progress').textContent()).toBe('');
    expect(await page.locator('button[type="submit"]').isEnabled()).toBe(true);
    expect(new URL(page.url()).pathname).toBe('/portal/join');
  });

  it('a lab page opened while the seat was starting loads itself again once the seat is ready', async () => {
    await browser.page.evaluate(() => localStorage.clear());
    const page = await join('Chen');
    await expect.poll(() => page.locator('#progress').textContent(), { timeout: 10_000 }).toContain('Preparing your seat');
    // The learner goes to the lab anyway (a second tab, a bookmark): the banner says the seat is not ready.
    await page.goto(`${portal.origin}/labs/first-service/`);
    await expect
      .poll(() => page.locator('#dplab-portal-banner').textContent(), { timeout: 10_000 })
      .toBe(`Your seat is being prepared: ${WAITING}`);
    await page.evaluate(() => ((window as unknown as { loadedBefore: boolean }).loadedBefore = true));
    backend.outcome.set('s03', 'ready');
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { loadedBefore?: boolean }).loadedBefore ?? false), { timeout: 15_000 })
      .toBe(false);
    expect(new URL(page.url()).pathname).toBe('/labs/first-service/');
  });
});
