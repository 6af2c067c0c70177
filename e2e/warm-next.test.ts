/**
 * Starting the next lab's cluster ahead (issue 41), in Chromium over the cluster test doubles:
 * on first-service, once its iptables cluster is ready, the page asks the runner for the next
 * lab's cluster (proxy-mode-rules, which this learner opens on nftables), and one line says so;
 * Stop deletes it, and the opt-out holds across a reload until the learner turns it on again.
 * The line is looked at in both sizes and themes (screenshots, the visibility audit, axe).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { firstServiceScenario } from '../test/fixtures/first-service-scenario.ts';
import { fakeSystem, healthyRules, nodesJson } from '../test/fixtures/cluster-scenarios.ts';
import { hasChromium, chromiumNote, openSignedIn, stageWithDoubles, type Stage } from './harness.ts';
import { auditPage } from './visibility-audit.ts';
import { runAxe } from './axe-run.ts';
import { MIN_TEXT_PX } from '../site/client/diagram-view.ts';

const LAB = '/labs/first-service/';
const NEXT_TITLE = 'Proxy mode and the rules behind web';
const GiB = 1024 ** 3;
const SHOTS = process.env.DPLAB_WARM_SHOTS ?? join(process.cwd(), 'test-results', 'screenshots', 'warm-next');
mkdirSync(SHOTS, { recursive: true });

const creates = (stage: Stage) =>
  stage.doubles.commandLines().filter((l) => l.startsWith('kind create cluster --name dplab-nftables ')).length;
const deletes = (stage: Stage) =>
  stage.doubles.commandLines().filter((l) => l.startsWith('kind delete cluster --name dplab-nftables ')).length;
const line = (page: Page) => page.locator('dplab-warm-next');
const lineState = (page: Page) => line(page).getAttribute('data-state');

describe.skipIf(!hasChromium)(`the next lab's cluster, started ahead${chromiumNote}`, { timeout: 120_000 }, () => {
  let stage: Stage;
  /** The host's available memory as the runner's decision reads it (the last test makes it short). */
  let free = 8 * GiB;

  beforeAll(async () => {
    const nft = (rest: object) => ({
      tool: 'kubectl' as const,
      match: ' --kubeconfig \\S*dplab-nftables\\.yaml get nodes -o json$',
      ...rest,
    });
    stage = await stageWithDoubles(
      {
        rules: [
          // iptables (this lab's) exists from the start; nftables once the runner has made it.
          { tool: 'kind', match: '^get clusters$', when: { nft: 'yes' }, stdout: 'dplab-iptables\ndplab-nftables\n' },
          { tool: 'kind', match: '^get clusters$', stdout: 'dplab-iptables\n' },
          // A start that takes its time, until the test lets the next one through at once.
          {
            tool: 'kind',
            match: '^create cluster --name dplab-nftables ',
            when: { slow: 'yes' },
            delayMs: 60_000,
            set: { nft: 'yes' },
            writesAfter: '--kubeconfig',
            writes: 'apiVersion: v1\n',
          },
          {
            tool: 'kind',
            match: '^create cluster --name dplab-nftables ',
            set: { nft: 'yes' },
            writesAfter: '--kubeconfig',
            writes: 'apiVersion: v1\n',
          },
          { tool: 'kind', match: '^delete cluster --name dplab-nftables ', set: { nft: 'no' } },
          nft({ when: { nft: 'yes' }, stdout: nodesJson('nftables') }),
          nft({ stderr: 'The connection to the server 127.0.0.1:6443 was refused\n', exit: 1 }),
          ...firstServiceScenario('iptables').rules,
          ...healthyRules('iptables'),
        ],
      },
      {
        clusterOf: 'iptables',
        browser: { bypassCSP: true },
        // The host's memory as the decision reads it: room for one more cluster, on any machine.
        course: { warm: true, services: { system: fakeSystem({ memAvailableBytes: () => free }) } },
      },
    );
    stage.doubles.setState({ created: 'yes', slow: 'yes' });
    // This learner opened the next lab on nftables before: it opens there again, so that is its cluster.
    await stage.browser.context.addInitScript(() => {
      if (!localStorage.getItem('dplab:lab:proxy-mode-rules'))
        localStorage.setItem('dplab:lab:proxy-mode-rules', JSON.stringify({ passed: {}, hints: {}, mode: 'nftables' }));
    });
  });
  afterAll(async () => {
    await stage?.close();
  });

  it('once this lab’s cluster is ready, the next lab’s starts ahead and the line says which, for which lab', async () => {
    const { page } = stage.browser;
    await page.setViewportSize({ width: 1280, height: 800 });
    await openSignedIn(page, stage.course, LAB);
    await expect.poll(() => lineState(page), { timeout: 30_000 }).toBe('warming');
    const text = await line(page).innerText();
    expect(text).toContain(`Starting the nftables cluster for the next lab, ${NEXT_TITLE}, in the background`);
    expect(await line(page).getAttribute('role')).toBe('status');
    expect(await line(page).getAttribute('aria-live')).toBe('polite');
    await expect.poll(() => creates(stage), { timeout: 10_000 }).toBe(1);
    // The step under way shows, from the event stream.
    await expect
      .poll(() => line(page).locator('.dplab-warm-text').innerText(), { timeout: 10_000 })
      .toMatch(/in the background\. Now: .+\.$/);
    // The nftables panel (hidden on this page: another mode) says how that cluster came.
    await expect
      .poll(() => page.locator('dplab-cluster-panel[mode="nftables"]').textContent(), { timeout: 10_000 })
      .toContain('Started ahead');
  });

  it('fits and reads in both sizes and both themes (screenshots, the visibility audit, axe)', async () => {
    const { page } = stage.browser;
    for (const size of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      for (const scheme of ['light', 'dark'] as const) {
        await page.setViewportSize(size);
        await page.emulateMedia({ colorScheme: scheme });
        // A reload shows the cluster started ahead again, and asks nothing more of the runner.
        await page.reload();
        await expect.poll(() => lineState(page), { timeout: 30_000 }).toBe('warming');
        expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(scheme);
        const findings = (await page.evaluate(auditPage, MIN_TEXT_PX)).filter((f) => f.selector.includes('warm'));
        expect(findings).toEqual([]);
        const box = await line(page).boundingBox();
        expect(box!.x).toBeGreaterThanOrEqual(0);
        expect(box!.x + box!.width).toBeLessThanOrEqual(size.width);
        await page.screenshot({ path: join(SHOTS, `warming-${size.width}-${scheme}.png`) });
        const axe = (await runAxe(page)).filter((v) => v.targets.some((t) => t.includes('warm')));
        expect(axe).toEqual([]);
      }
    }
    expect(creates(stage)).toBe(1);
  });

  it('Stop deletes the cluster started ahead and turns starting ahead off; a reload keeps it off', async () => {
    const { page } = stage.browser;
    await page.setViewportSize({ width: 1280, height: 800 });
    const stop = line(page).getByRole('button', { name: /Stop/ });
    // From the keyboard.
    await stop.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => lineState(page), { timeout: 20_000 }).toBe('off');
    expect(deletes(stage)).toBeGreaterThanOrEqual(1);
    expect(await line(page).innerText()).toContain('Starting the next lab’s cluster ahead is off.');
    expect(await page.evaluate(() => localStorage.getItem('dplab:warm-ahead'))).toBe('off');
    await expect.poll(() => stage.doubles.state().nft ?? 'no').toBe('no');
    await page.screenshot({ path: join(SHOTS, 'off-1280-dark.png') });

    await page.reload();
    await expect.poll(() => lineState(page), { timeout: 30_000 }).toBe('off');
    expect(creates(stage)).toBe(1);
  });

  it('Turn it on asks again; the cluster comes up and the line says it is ready', async () => {
    const { page } = stage.browser;
    stage.doubles.setState({ slow: 'no' });
    await page.emulateMedia({ colorScheme: 'light' });
    await line(page).getByRole('button', { name: 'Turn it on' }).click();
    await expect.poll(() => lineState(page), { timeout: 30_000 }).toBe('ready');
    expect(await line(page).innerText()).toContain(`The nftables cluster for the next lab, ${NEXT_TITLE}, is ready.`);
    expect(await page.evaluate(() => localStorage.getItem('dplab:warm-ahead'))).toBeNull();
    expect(creates(stage)).toBe(2);
    await page.screenshot({ path: join(SHOTS, 'ready-1280-light.png') });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(SHOTS, 'ready-390-light.png') });
  });

  it('too little memory: nothing starts, and the line says why with the figures, quietly', async () => {
    const { page } = stage.browser;
    await page.evaluate(async () => {
      const token = localStorage.getItem('dplab.token');
      await fetch('/api/clusters/nftables', { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    });
    await expect.poll(() => stage.doubles.state().nft ?? 'no').toBe('no');
    free = 1.5 * GiB;
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.reload();
    await expect.poll(() => lineState(page), { timeout: 30_000 }).toBe('declined');
    expect(await line(page).innerText()).toBe(
      'Not starting the next lab’s cluster ahead: 1.5 GiB available; the nftables cluster needs about 2 GiB.',
    );
    expect(await line(page).getByRole('button').count()).toBe(0);
    expect(creates(stage)).toBe(2);
    await page.screenshot({ path: join(SHOTS, 'declined-390-dark.png') });
  });
});
