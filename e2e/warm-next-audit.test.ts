/**
 * The audit tier's part of "the next lab's cluster, started ahead" (test/tiers.ts): the line that
 * says the next lab's cluster is starting fits and reads at 1280×800 and 390×844 in light and dark,
 * by the visibility audit and axe-core. Screenshots go to DPLAB_WARM_SHOTS, or
 * test-results/screenshots/warm-next/. The behaviour itself is e2e/warm-next.test.ts.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, chromiumNote, openSignedIn, type Stage } from './harness.ts';
import { AUDIT_SCHEMES, AUDIT_VIEWPORTS, auditPage } from './visibility-audit.ts';
import { runAxe } from './axe-run.ts';
import { SCREENSHOT_DIR } from './workspace-view.ts';
import { MIN_TEXT_PX } from '../site/client/diagram-view.ts';
import { creates, GiB, LAB, line, lineState, warmNextStage } from './warm-next-stage.ts';

const SHOTS = process.env.DPLAB_WARM_SHOTS ?? join(SCREENSHOT_DIR, 'warm-next');

describe.skipIf(!hasChromium)(`the next lab's cluster started ahead, audited${chromiumNote}`, { timeout: 120_000 }, () => {
  let stage: Stage;

  beforeAll(async () => {
    stage = await warmNextStage(() => 8 * GiB, { bypassCSP: true });
    mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await stage?.close();
  });

  for (const size of AUDIT_VIEWPORTS) {
    for (const scheme of AUDIT_SCHEMES) {
      it(`the line while it starts fits and reads at ${size.width}×${size.height}, ${scheme}`, async () => {
        const { page } = stage.browser;
        await page.setViewportSize(size);
        await page.emulateMedia({ colorScheme: scheme });
        await openSignedIn(page, stage.course, LAB);
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
        // Each page load shows the one cluster started ahead; none asks for a second.
        expect(creates(stage)).toBe(1);
      });
    }
  }
});
