/**
 * The no-Docker replay as a learner sees it at 1280×800 and 390×844, light and dark: the note
 * that names the blocker, a step's replay opened, its output in its own scroll box, inside the
 * screen, with no critical or serious axe violation. Screenshots to test-results/screenshots/.
 * One of the whole-course audits (test/tiers.ts); the replay's behaviour is e2e/replay.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonDownRules, scenario } from '../test/fixtures/cluster-scenarios.ts';
import { chromiumNote, hasChromium, openSignedIn, stageWithDoubles, type Stage } from './harness.ts';
import { screenshot } from './workspace-view.ts';
import { runAxe } from './axe-run.ts';
import { AUDIT_SCHEMES, AUDIT_VIEWPORTS } from './visibility-audit.ts';

const step = (id: string) => `dplab-lab .dplab-step[data-step="${id}"]`;

describe.skipIf(!hasChromium)(`the replay at each size and theme${chromiumNote}`, { timeout: 120_000 }, () => {
  let stage: Stage;

  beforeAll(async () => {
    // CSP bypassed for axe's script alone (e2e/axe-run.ts); the pages are the built course.
    stage = await stageWithDoubles(scenario('iptables', daemonDownRules()), { browser: { bypassCSP: true } });
  });
  afterAll(async () => {
    await stage?.close();
  });

  for (const size of AUDIT_VIEWPORTS)
    for (const theme of AUDIT_SCHEMES)
      it(`screenshot of a replay at ${size.width}×${size.height}, ${theme}`, async () => {
        const { page } = stage.browser;
        await page.setViewportSize(size);
        await openSignedIn(page, stage.course, '/labs/first-service/');
        await page.evaluate((t) => localStorage.setItem('starlight-theme', t), theme);
        await page.reload();
        expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
        await page.locator('.dplab-blocked').waitFor({ timeout: 20_000 });
        await screenshot(page, `replay-note-${size.width}x${size.height}-${theme}`);
        const button = page.locator(`${step('reach-web')} button[data-replay]`);
        await button.click();
        const region = page.locator(`${step('reach-web')} .dplab-replay`);
        await region.locator('.dplab-replay-source').waitFor({ timeout: 15_000 });
        await region.locator('.dplab-replay-source').scrollIntoViewIfNeeded();
        await screenshot(page, `replay-step-${size.width}x${size.height}-${theme}`);
        await region.locator('h3', { hasText: 'After them' }).scrollIntoViewIfNeeded();
        await screenshot(page, `replay-step-after-${size.width}x${size.height}-${theme}`);
        // The replay open, with a long output in its scroll box: no critical or serious violation.
        const serious = (await runAxe(page)).filter((v) => v.impact === 'critical' || v.impact === 'serious');
        expect(serious).toEqual([]);
        const box = await region.boundingBox();
        expect(box!.x).toBeGreaterThanOrEqual(0);
        expect(box!.x + box!.width).toBeLessThanOrEqual(size.width);
      });
});
