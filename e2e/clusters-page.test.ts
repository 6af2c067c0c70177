/**
 * /clusters/ with the Docker daemon down (the test doubles): the four panels share one problem,
 * which the page says once, with its fix; the others point up to it.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonDownRules } from '../test/fixtures/cluster-scenarios.ts';
import { chromiumNote, hasChromium, openSignedIn, stageWithDoubles, type Stage } from './harness.ts';

const shots = join('test-results', 'screenshots');

describe.skipIf(!hasChromium)(`the clusters page without Docker${chromiumNote}`, { timeout: 90_000 }, () => {
  let stage: Stage;
  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    stage = await stageWithDoubles({ rules: daemonDownRules() });
  });
  afterAll(async () => {
    await stage?.close();
  });

  it('says the one Docker problem once, and points the other panels to it', async () => {
    const { page } = stage.browser;
    await page.setViewportSize({ width: 1280, height: 800 });
    await openSignedIn(page, stage.course, '/clusters/');
    const panels = page.locator('dplab-cluster-panel');
    await expect.poll(() => panels.count()).toBe(4);
    // Start each, as a learner trying them one by one would.
    for (let i = 0; i < 4; i++) {
      const start = panels.nth(i).getByRole('button', { name: 'Start' });
      if (await start.isVisible()) await start.click();
    }
    await expect.poll(() => page.locator('.dplab-cp-same').count(), { timeout: 30_000 }).toBe(3);
    expect(await page.locator('.dplab-cp-error:visible').count()).toBe(1);
    expect(await page.locator('.dplab-cp-error').count()).toBe(4);
    expect(await page.locator('.dplab-cp-same').first().textContent()).toContain('the first panel (kube-proxy, iptables mode)');
    await page.screenshot({ path: join(shots, 'spine-clusters-no-docker-1280-light.png'), fullPage: true });
  });

  it('a Start that fails before the runner’s answer reaches the page still shows its error (a busy machine)', async () => {
    const { page } = stage.browser;
    await page.setViewportSize({ width: 1280, height: 800 });
    await openSignedIn(page, stage.course, '/clusters/');
    const panel = page.locator('dplab-cluster-panel[mode="nftables"]');
    await panel.getByRole('button', { name: 'Start' }).waitFor();
    // The run fails at its first step and says so on the event stream; the answer to the click comes later.
    let answered = 0;
    await page.route('**/api/clusters/nftables/up', async (route) => {
      const response = await route.fetch();
      await new Promise((r) => setTimeout(r, 1_500));
      answered++;
      await route.fulfill({ response });
    });
    try {
      const start = panel.getByRole('button', { name: 'Start' });
      await start.click();
      await expect.poll(() => answered, { timeout: 10_000 }).toBe(1);
      // Once the answer is in (the button is live again), the panel still says what the run said.
      await expect.poll(() => start.isEnabled({ timeout: 100 }).catch(() => false), { timeout: 10_000 }).toBe(true);
      expect(await panel.getAttribute('data-state')).toBe('absent');
      expect(await panel.locator('.dplab-cp-error').count()).toBe(1);
    } finally {
      await page.unroute('**/api/clusters/nftables/up');
    }
  });

  it("a lab's bar keeps its whole title after a failed Start", async () => {
    const { page } = stage.browser;
    await page.setViewportSize({ width: 1280, height: 800 });
    await openSignedIn(page, stage.course, '/labs/first-service/');
    const start = page.locator('dplab-lab .dplab-cluster:not([hidden])').getByRole('button', { name: 'Start' });
    await start.click();
    await page.locator('dplab-lab .dplab-cluster:not([hidden]) .dplab-cp-error').waitFor({ timeout: 30_000 });
    const title = page.locator('dplab-lab .dplab-ws-title');
    const cut = await title.evaluate((el) => el.scrollWidth > el.clientWidth);
    await page.screenshot({ path: join(shots, 'spine-lab-failed-start-1280-light.png') });
    expect(cut, `"${await title.textContent()}" is shown whole`).toBe(false);
  });
});
