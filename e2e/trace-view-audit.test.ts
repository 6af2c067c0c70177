/**
 * The audit tier's part of "Trace a request" (test/tiers.ts): a traced nftables path on the
 * explorer, over the runner's doubles replaying the captured trace, passes the visibility audit and
 * axe-core at 1280×800 and 390×844 in light and dark, its chosen backends drawn in the theme's
 * colours. Screenshots of the diagram, the form, the steps and the tally go to DPLAB_TRACE_SHOTS, or
 * test-results/screenshots/trace/. The behaviour itself is e2e/trace-view.test.ts.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeKubeconfig } from '../test/fixtures/doubles.ts';
import { MIN_TEXT_PX } from '../site/client/diagram-view.ts';
import { TRACE_COLOURS } from '../site/client/mermaid-theme.ts';
import { hasChromium, chromiumNote, openSignedIn, stageWithDoubles, type Browser, type Course, type Stage } from './harness.ts';
import { auditPage } from './visibility-audit.ts';
import { runAxe } from './axe-run.ts';
import { SCREENSHOT_DIR } from './workspace-view.ts';
import { rgb, rules, showLive, trace } from './trace-stage.ts';

const SHOTS = process.env.DPLAB_TRACE_SHOTS ?? join(SCREENSHOT_DIR, 'trace');

describe.skipIf(!hasChromium)(`the traced view, audited${chromiumNote}`, { timeout: 120_000 }, () => {
  let stage: Stage;
  let course: Course;
  let browser: Browser;

  beforeAll(async () => {
    // axe is injected into the page (runAxe), past its CSP.
    stage = await stageWithDoubles({ rules: rules() }, { clusterOf: 'iptables', browser: { bypassCSP: true } });
    ({ course, browser } = stage);
    writeKubeconfig('nftables');
    mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await stage?.close();
  });

  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ])
    for (const scheme of ['light', 'dark'] as const)
      it(`${viewport.width}×${viewport.height}, ${scheme}: the traced view passes the visibility audit`, async () => {
        const { page } = browser;
        await page.setViewportSize(viewport);
        await page.emulateMedia({ colorScheme: scheme });
        await openSignedIn(page, course, '/explorer/');
        const column = await showLive(page, 'nftables');
        await trace(column);
        await column.locator('.dp-diagram[data-traced="marked"][data-rendered] svg').waitFor({ timeout: 30_000 });
        expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(scheme);
        // The diagram's colours follow the theme it was drawn in.
        const stroke = await column
          .locator('.dp-diagram svg g.node.dplabChosen :is(rect, path)')
          .first()
          .evaluate((e) => getComputedStyle(e).stroke);
        expect(stroke).toBe(rgb(TRACE_COLOURS[scheme].stroke));
        await page.evaluate(() => document.querySelectorAll<HTMLDetailsElement>('dplab-dataplane details').forEach((d) => (d.open = true)));
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        const findings = await page.evaluate(auditPage, MIN_TEXT_PX);
        expect(findings.map((f) => `${f.what}: ${f.selector} (${f.sizes})`)).toEqual([]);
        expect(await runAxe(page)).toEqual([]);
        const name = `${viewport.width}x${viewport.height}-${scheme}`;
        await column.locator('.dp-diagram').scrollIntoViewIfNeeded();
        await page.screenshot({ path: join(SHOTS, `explorer-diagram-${name}.png`) });
        await column.locator('.dp-trace-form').evaluate((e) => e.scrollIntoView({ block: 'start' }));
        await page.evaluate(() => window.scrollBy(0, -80));
        await page.screenshot({ path: join(SHOTS, `explorer-form-${name}.png`) });
        await column.locator('.dp-trace-first').scrollIntoViewIfNeeded();
        await page.screenshot({ path: join(SHOTS, `explorer-steps-${name}.png`) });
        await column.locator('table.dp-tally').evaluate((e) => e.scrollIntoView({ block: 'start' }));
        await page.evaluate(() => window.scrollBy(0, -80));
        await page.screenshot({ path: join(SHOTS, `explorer-tally-${name}.png`) });
      });
});
