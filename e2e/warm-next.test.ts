/**
 * Starting the next lab's cluster ahead (issue 41), in Chromium over the cluster test doubles:
 * on first-service, once its iptables cluster is ready, the page asks the runner for the next
 * lab's cluster (proxy-mode-rules, which this learner opens on nftables), and one line says so;
 * Stop deletes it, and the opt-out holds across a reload until the learner turns it on again.
 * The page runs under its own CSP. Its look at both sizes and themes (the visibility audit, axe)
 * is the audit tier's e2e/warm-next-audit.test.ts; the stage is e2e/warm-next-stage.ts.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, chromiumNote, openSignedIn, type Stage } from './harness.ts';
import { SCREENSHOT_DIR } from './workspace-view.ts';
import { creates, deletes, GiB, LAB, line, lineState, NEXT_TITLE, warmNextStage } from './warm-next-stage.ts';

const SHOTS = process.env.DPLAB_WARM_SHOTS ?? join(SCREENSHOT_DIR, 'warm-next');
mkdirSync(SHOTS, { recursive: true });

describe.skipIf(!hasChromium)(`the next lab's cluster, started ahead${chromiumNote}`, { timeout: 120_000 }, () => {
  let stage: Stage;
  /** The host's available memory as the runner's decision reads it (the last test makes it short). */
  let free = 8 * GiB;

  beforeAll(async () => {
    stage = await warmNextStage(() => free);
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

  it('a reload shows the cluster started ahead again, and asks nothing more of the runner', async () => {
    const { page } = stage.browser;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.reload();
    await expect.poll(() => lineState(page), { timeout: 30_000 }).toBe('warming');
    await page.screenshot({ path: join(SHOTS, 'warming-390-dark-reloaded.png') });
    expect(creates(stage)).toBe(1);
  });

  it('Stop deletes the cluster started ahead and turns starting ahead off; a reload keeps it off', async () => {
    const { page } = stage.browser;
    await page.setViewportSize({ width: 1280, height: 800 });
    const stop = line(page).getByRole('button', { name: /Stop/ });
    // From the keyboard.
    await stop.focus();
    await page.keyboard.press('Enter');
    // At once, while the start is cancelled and its nodes deleted (seconds, on kind): what is happening.
    await expect.poll(() => lineState(page), { timeout: 5_000 }).toBe('stopping');
    expect(await line(page).innerText()).toBe(`Stopping the nftables cluster started ahead for ${NEXT_TITLE} and deleting it…`);
    expect(await line(page).getByRole('button').count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'stopping-1280-dark.png') });
    await expect.poll(() => lineState(page), { timeout: 20_000 }).toBe('off');
    expect(deletes(stage)).toBeGreaterThanOrEqual(1);
    // The keyboard's place stays in the line, now on its one button.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Turn it on');
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
