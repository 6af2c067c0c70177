/**
 * The learner's loop in Chromium on a real kind cluster (the test environment's engine, the
 * product's kind provider, no doubles): open first-service with no cluster, press Start, watch
 * the provisioning steps, the cluster becomes ready and the lab sets itself up, a snippet runs in
 * the terminal and makes real pods, Check passes on what the API server says, a node tab opens a
 * shell in a real node container, and the dataplane explorer reads that node's real rules.
 * Screenshots land in test-results/screenshots/kind-journey-*.png.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ClusterManager } from '../../scripts/clusters/manager.ts';
import { buildIsStale, buildSite } from '../../scripts/base/site-build.ts';
import { labImages } from '../../scripts/labs/images.ts';
import { chromiumNote, hasChromium, launchBrowser, openSignedIn, startCourse, type Browser, type Course } from '../../e2e/harness.ts';
import { screenshot } from '../../e2e/workspace-view.ts';

const MODE = 'iptables';
const PAGE = '/labs/first-service/';
const step = (id: string) => `dplab-lab .dplab-step[data-step="${id}"]`;
const shell = 'dplab-terminal:not([node])';

async function terminalText(page: Page, selector = shell): Promise<string> {
  return (await page.locator(`${selector} .xterm-rows`).textContent())?.replace(/\u00a0/g, ' ') ?? '';
}

async function typeIn(page: Page, selector: string, line: string): Promise<void> {
  await page.locator(`${selector} .xterm`).click();
  await page.keyboard.type(line);
  await page.keyboard.press('Enter');
}

describe.skipIf(!hasChromium)(`the learner's journey on real kind${chromiumNote}`, () => {
  let course: Course;
  let browser: Browser;
  let page: Page;
  const manager = new ClusterManager({ imagesFor: labImages });

  beforeAll(async () => {
    // A state folder of its own: no progress or check log from an earlier run shows as done.
    process.env.DPLAB_STATE_DIR = mkdtempSync(join(tmpdir(), 'dplab-kind-journey-'));
    if (buildIsStale().stale) await buildSite();
    // Start must make the cluster: none of this mode may be left from another test.
    await manager.delete(MODE);
    course = await startCourse();
    browser = await launchBrowser();
    page = browser.page;
    await page.setViewportSize({ width: 1280, height: 800 });
  });
  afterAll(async () => {
    await browser?.close();
    await course?.close();
    await manager.delete(MODE);
  });

  it('Start shows each provisioning step, a real cluster becomes ready, and the lab sets itself up', async () => {
    await openSignedIn(page, course, PAGE);
    const panel = page.locator(`.dplab-ws-bar dplab-cluster-panel[mode="${MODE}"]`);
    await expect.poll(() => panel.getAttribute('data-state'), { timeout: 30_000 }).toBe('absent');
    await expect.poll(() => page.locator('.dplab-progress-text').textContent(), { timeout: 10_000 }).toBe(`0 of 4 steps done on ${MODE}`);
    await page.locator('.dplab-ws-bar .dplab-cluster:not([hidden]) dplab-cluster-panel button', { hasText: /^Start$/ }).click();
    await panel.locator('li[data-state="running"]').first().waitFor({ timeout: 30_000 });
    await screenshot(page, 'kind-journey-1-starting');
    // Every step the panel showed while the cluster came up (by its id), with the last state seen.
    const seen = new Map<string, string>();
    await expect
      .poll(
        async () => {
          const items = await panel
            .locator('li[data-id]')
            .evaluateAll((lis) => lis.map((li) => [li.getAttribute('data-id') ?? '', li.getAttribute('data-state') ?? ''] as const));
          for (const [id, state] of items) seen.set(id, state);
          return panel.getAttribute('data-state');
        },
        { timeout: 10 * 60_000, interval: 500 },
      )
      .toBe('ready');
    console.log(`[kind-journey] provisioning steps seen: ${[...seen].map(([id, st]) => `${id} ${st}`).join(', ')}`);
    expect(seen.size).toBeGreaterThanOrEqual(4);
    expect(seen.has('create')).toBe(true);
    expect([...seen.values()]).not.toContain('failed');
    await expect.poll(() => page.locator('.dplab-setup').getAttribute('data-state'), { timeout: 5 * 60_000, interval: 2_000 }).toBe('done');
    expect(await page.locator('.dplab-setup').textContent()).toContain(`Lab set up on ${MODE}`);
    await screenshot(page, 'kind-journey-2-ready');
  });

  it('a snippet run in the terminal makes real pods, and Check passes on them', async () => {
    await page.waitForSelector(`${shell}[data-state="open"]`, { timeout: 30_000 });
    for (const run of await page.locator(`${step('deploy-web')} .dplab-snippets [data-action="run"]`).all()) await run.click();
    // A Run waits for the prompt of the one before (the run queue): type only once the last was sent.
    await expect.poll(() => page.locator(`${shell}[data-queued]`).count(), { timeout: 300_000, interval: 1_000 }).toBe(0);
    await typeIn(page, shell, 'kubectl -n lab-first-service rollout status deploy/web --timeout=180s && echo "ROLLED-OUT-$((40+2))"');
    // The marker is worked out by the shell, so the echoed command line itself does not match it.
    await expect.poll(() => terminalText(page), { timeout: 200_000, interval: 2_000 }).toContain('ROLLED-OUT-42');
    await page.locator(`${step('deploy-web')} [data-action="check"]`).click();
    const result = page.locator(`${step('deploy-web')} .dplab-result[data-status="pass"]`);
    await result.waitFor({ timeout: 60_000 });
    console.log(`[kind-journey] check: ${(await result.textContent())?.trim()}`);
    // Nothing was done before this run (its own state folder): the Check just made it 1 of 4.
    expect(await page.locator('.dplab-progress-text').textContent()).toBe(`1 of 4 steps done on ${MODE}`);
    await screenshot(page, 'kind-journey-3-check');
  });

  it('a node tab opens a shell inside the real node container', async () => {
    const tabs = page.locator('dplab-terminal-tabs [role="tab"][data-tab="node"]');
    await expect.poll(() => tabs.allTextContents(), { timeout: 30_000 }).toEqual(['control-plane', 'worker', 'worker2']);
    await page.getByRole('tab', { name: 'worker', exact: true }).click();
    const node = `dplab-terminal[node="dplab-${MODE}-worker"]`;
    await page.waitForSelector(`${node}[data-state="open"]`, { timeout: 30_000 });
    // The hostname and the rules are the node's own: kube-proxy wrote KUBE-SERVICES there.
    await typeIn(page, node, `echo "HOST=$(hostname) RULES=$(iptables-save -t nat | grep -c '^-A KUBE-SERVICES') END"`);
    // The typed line holds "RULES=$(", the answer digits: only the answer matches.
    const answer = /HOST=(\S+?) RULES=(\d+) END/;
    await expect.poll(async () => answer.exec(await terminalText(page, node))?.[1], { timeout: 30_000 }).toBe(`dplab-${MODE}-worker`);
    const rules = Number(answer.exec(await terminalText(page, node))?.[2]);
    console.log(`[kind-journey] node shell: ${rules} KUBE-SERVICES rules on dplab-${MODE}-worker`);
    expect(rules).toBeGreaterThan(0);
    await screenshot(page, 'kind-journey-4-node-shell');
    await page.getByRole('tab', { name: 'Your shell' }).click();
  });

  it("the dataplane explorer reads the real node's rules", async () => {
    await openSignedIn(page, course, '/explorer/');
    const first = page.locator('dplab-dataplane .dp-column').first();
    await first.locator(`select.dp-source option[value="live:${MODE}"]`).waitFor({ state: 'attached', timeout: 30_000 });
    await first.locator('select.dp-source').selectOption(`live:${MODE}`);
    await page.locator('dplab-dataplane').getByLabel('Service (namespace/name)').fill('kube-system/kube-dns');
    await page.locator('dplab-dataplane').getByRole('button', { name: 'Show the dataplane' }).click();
    await first.locator('.dp-diagram[data-rendered] svg').waitFor({ timeout: 60_000 });
    const summary = (await first.locator('.dp-summary').textContent()) ?? '';
    console.log(`[kind-journey] explorer: ${summary}`);
    expect(summary).toMatch(/^kube-system\/kube-dns on dplab-iptables-\S+ \(iptables cluster\) · iptables-save · \d+ rules$/);
    // CoreDNS's two replicas share each of kube-dns's ports equally, at pod addresses of the real cluster.
    const shares = await first.locator('table.dp-shares td.dp-share').allTextContents();
    expect(shares.length).toBeGreaterThanOrEqual(2);
    expect(new Set(shares)).toEqual(new Set(['50.0%']));
    expect(await first.locator('.dp-diagram svg').textContent()).toMatch(/10\.244\.\d+\.\d+:53/);
    await screenshot(page, 'kind-journey-5-explorer');
  });
});
