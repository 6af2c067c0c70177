/**
 * Browser tier for the dataplane explorer: on /explorer/ the panel draws a fixture-backed
 * Service's path (an SVG), its table shows web's three backends at a third each, a second mode
 * sits side by side, and a live mode without a cluster says how to start one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, chromiumNote, launchBrowser, openSignedIn, startCourse, type Browser, type Course } from './harness.ts';

describe.skipIf(!hasChromium)(`dataplane explorer in the browser${chromiumNote}`, () => {
  let course: Course;
  let browser: Browser;
  const savedStateDir = process.env.DPLAB_STATE_DIR;

  beforeAll(async () => {
    // Not the developer's cluster state: live reads must find "not running" even where clusters run.
    process.env.DPLAB_STATE_DIR = mkdtempSync(join(tmpdir(), 'dplab-e2e-dataplane-'));
    course = await startCourse();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await course?.close();
    rmSync(process.env.DPLAB_STATE_DIR!, { recursive: true, force: true });
    if (savedStateDir === undefined) delete process.env.DPLAB_STATE_DIR;
    else process.env.DPLAB_STATE_DIR = savedStateDir;
  });

  it('draws the path of a fixture-backed Service and shows 3 backends at 33.3%', async () => {
    const { page } = browser;
    await openSignedIn(page, course, '/explorer/');
    const first = page.locator('dplab-dataplane .dp-column').first();
    await first.locator('.dp-diagram[data-rendered] svg').waitFor({ timeout: 30_000 });
    expect(await first.locator('.dp-summary').textContent()).toMatch(
      /^default\/web on fixture iptables-save\/clusterip .* · iptables-save · \d+ rules$/,
    );
    const shares = await first.locator('table.dp-shares td.dp-share').allTextContents();
    expect(shares).toEqual(['33.3%', '33.3%', '33.3%']);
    expect(await first.locator('.dp-diagram svg').textContent()).toContain('10.244.2.2:8080');
    // Side by side: the second column shows the same Service through nftables.
    const second = page.locator('dplab-dataplane .dp-column').nth(1);
    await second.locator('.dp-diagram[data-rendered] svg').waitFor({ timeout: 30_000 });
    expect(await second.locator('.dp-summary').textContent()).toContain('nft-json');
    expect(await page.locator('dplab-dataplane .dp-status').textContent()).toMatch(/^Showing default\/web/);
  });

  it("kube-proxy's own output as a fixture: a LoadBalancer with source ranges, one row per frontend", async () => {
    const { page } = browser;
    await openSignedIn(page, course, '/explorer/');
    const first = page.locator('dplab-dataplane .dp-column').first();
    await first.locator('.dp-diagram[data-rendered] svg').waitFor({ timeout: 30_000 });
    await page.locator('dplab-dataplane input[name=service]').fill('ns5/svc5');
    await first.locator('select.dp-source').selectOption('fixture:iptables-save/upstream-v1.35-overall');
    await page.locator('dplab-dataplane button[type=submit]').click();
    await expect
      .poll(() => first.locator('.dp-summary').textContent(), { timeout: 20_000 })
      .toContain('ns5/svc5 on fixture iptables-save/upstream-v1.35-overall');
    await first.locator('.dp-diagram[data-rendered] svg').waitFor({ timeout: 30_000 });
    const table = await first.locator('table.dp-shares').textContent();
    expect(table).toContain('LoadBalancer');
    expect(table).toContain('5.6.7.8');
    expect(table).toContain('only from 203.0.113.0/25');
    await page.screenshot({ path: join(tmpdir(), 'dplab-explorer-upstream.png'), fullPage: true });
  });

  it('switching the source by keyboard and refreshing redraws; a Local NodePort on a node without pods shows the drop', async () => {
    const { page } = browser;
    await openSignedIn(page, course, '/explorer/');
    const first = page.locator('dplab-dataplane .dp-column').first();
    await first.locator('.dp-diagram[data-rendered] svg').waitFor({ timeout: 30_000 });
    await first.locator('select.dp-source').focus();
    await first.locator('select.dp-source').selectOption('fixture:ipvsadm/etp-local-without-endpoints');
    await page.keyboard.press('Tab'); // the node select is disabled for fixtures: focus moves to Refresh
    await page.keyboard.press('Enter');
    await expect
      .poll(() => first.locator('.dp-summary').textContent(), { timeout: 20_000 })
      .toContain('ipvsadm/etp-local-without-endpoints');
    await first.locator('.dp-diagram[data-rendered] svg').waitFor({ timeout: 30_000 });
    expect(await first.locator('table.dp-shares').textContent()).toContain('dropped here: no local endpoint');
  });

  it('a live mode without a cluster says how to start it', async () => {
    const { page } = browser;
    await openSignedIn(page, course, '/explorer/');
    const first = page.locator('dplab-dataplane .dp-column').first();
    await first.locator('select.dp-source option[value="live:iptables"]').waitFor({ state: 'attached', timeout: 20_000 });
    await first.locator('select.dp-source').selectOption('live:iptables');
    await first.getByRole('button', { name: 'Refresh' }).click();
    const alert = first.locator('.dp-error[role="alert"]');
    await alert.waitFor({ timeout: 30_000 });
    expect(await alert.textContent()).toMatch(/dplab up iptables/);
  });

  it('an unknown Service in a fixture names the ones it has', async () => {
    const { page } = browser;
    await openSignedIn(page, course, '/explorer/');
    const panel = page.locator('dplab-dataplane');
    await panel.locator('.dp-column').first().locator('.dp-diagram[data-rendered] svg').waitFor({ timeout: 30_000 });
    await panel.getByLabel('Service (namespace/name)').fill('default/nope');
    await panel.getByRole('button', { name: 'Show the dataplane' }).click();
    const alert = panel.locator('.dp-column').first().locator('.dp-error');
    await alert.waitFor({ timeout: 20_000 });
    expect(await alert.textContent()).toContain('Known: default/kubernetes, default/web, kube-system/kube-dns');
  });
});
