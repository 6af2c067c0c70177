/**
 * Diagrams as a reader sees them at 1280×800 (and 390 px wide): on every lesson and on the
 * explorer, each drawn diagram's labels are at least 12 px on screen, a lesson's diagram fits its
 * column, zoom works both ways, nothing is cut off (what is wider than the page, once zoomed or on
 * the explorer, scrolls inside its own box, which the keyboard can reach), and full screen opens
 * it alone, fitted to the window.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { hasChromium, chromiumNote, openSignedIn } from './harness.ts';
import { courseAndBrowser } from './course-and-browser.ts';
import { screenshot } from './workspace-view.ts';

const LESSONS = [
  'services',
  'iptables',
  'ipvs',
  'nftables',
  'cilium',
  'traffic-paths',
  'affinity-topology-headless',
  'l7-policy-hubble',
  'comparing',
  'debugging-migrating',
];

interface Measured {
  minLabelPx: number;
  labels: number;
  viewRight: number;
  contentRight: number;
  scrolls: boolean;
  fits: boolean;
  /** The drawing's width on screen, and its column's. */
  drawnPx: number;
  columnPx: number;
  focusable: boolean;
}

/** Every drawn diagram under `root`: its smallest label on screen, and whether all of it can be seen. */
async function measure(page: Page, root: string): Promise<Measured[]> {
  return page.evaluate((root) => {
    return [...document.querySelectorAll<HTMLElement>(`${root} .dplab-diagram-view`)].map((view) => {
      // Lesson diagrams hold one drawing per colour scheme; CSS shows the page's.
      const svg = [...view.querySelectorAll('svg')].find((s) => s.getClientRects().length > 0)!;
      const vb = svg.viewBox.baseVal;
      const scale = svg.getBoundingClientRect().width / vb.width;
      const labels = [...svg.querySelectorAll<HTMLElement>('.nodeLabel, .edgeLabel, text')].filter((l) => (l.textContent ?? '').trim());
      const sizes = labels.map((l) => parseFloat(getComputedStyle(l).fontSize) * scale);
      const box = view.getBoundingClientRect();
      return {
        minLabelPx: Math.min(...sizes),
        labels: labels.length,
        viewRight: box.right,
        contentRight: document.documentElement.clientWidth,
        scrolls: getComputedStyle(view).overflowX === 'auto',
        fits: view.scrollWidth <= view.clientWidth + 1,
        drawnPx: view.scrollWidth,
        columnPx: view.clientWidth,
        focusable: view.tabIndex >= 0,
      };
    });
  }, root);
}

describe.skipIf(!hasChromium)(`diagrams are readable${chromiumNote}`, { timeout: 60_000 }, () => {
  const stage = courseAndBrowser();
  beforeAll(async () => {
    await openSignedIn(stage.browser.page, stage.course, '/');
  });

  it('lesson diagrams: labels ≥ 12 px, nothing cut off', async () => {
    const { page } = stage.browser;
    let diagrams = 0;
    for (const lesson of LESSONS) {
      await page.goto(`${stage.course.origin}/lessons/${lesson}/`);
      const count = await page.locator('dplab-mermaid').count();
      await expect.poll(() => page.locator('dplab-mermaid[data-rendered]').count(), { timeout: 20_000 }).toBe(count);
      for (const d of await measure(page, 'dplab-mermaid')) {
        diagrams++;
        expect(d.labels, `${lesson}: labels found`).toBeGreaterThan(0);
        expect(d.minLabelPx, `${lesson}: smallest label`).toBeGreaterThanOrEqual(12);
        expect(d.viewRight, `${lesson}: diagram inside the page`).toBeLessThanOrEqual(d.contentRight);
        if (!d.fits) expect(d.scrolls && d.focusable, `${lesson}: a wide diagram scrolls in its own box`).toBe(true);
      }
    }
    expect(diagrams).toBeGreaterThan(5);
    await page.goto(`${stage.course.origin}/lessons/iptables/`);
    await page.locator('dplab-mermaid[data-rendered]').first().waitFor();
    await page.locator('dplab-mermaid[data-rendered]').first().scrollIntoViewIfNeeded();
    await screenshot(page, 'lesson-iptables-diagram');
  });

  it('each colour scheme shows its own drawing, readable, and the page loads no mermaid', async () => {
    const { page } = stage.browser;
    const scripts: string[] = [];
    page.on('request', (r) => void (r.resourceType() === 'script' && scripts.push(r.url())));
    for (const scheme of ['light', 'dark'] as const) {
      await page.evaluate((s) => localStorage.setItem('starlight-theme', s), scheme);
      await page.goto(`${stage.course.origin}/lessons/services/`);
      await page.locator('dplab-mermaid[data-rendered]').first().waitFor();
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(scheme);
      const shown = await page.evaluate(() =>
        [...document.querySelectorAll('dplab-mermaid svg')]
          .filter((s) => s.getClientRects().length > 0)
          .map((s) => s.getAttribute('data-scheme')),
      );
      expect(shown).toEqual(['services', 'services'].map(() => scheme));
      for (const d of await measure(page, 'dplab-mermaid')) expect(d.minLabelPx, `${scheme}: smallest label`).toBeGreaterThanOrEqual(12);
      await page.locator('dplab-mermaid').first().scrollIntoViewIfNeeded();
      await screenshot(page, `lesson-services-diagram-${scheme}`);
    }
    await page.evaluate(() => localStorage.removeItem('starlight-theme'));
    expect(scripts.filter((u) => /mermaid|flowDiagram|sequenceDiagram|dagre/i.test(u))).toEqual([]);
  });

  it('full screen shows a diagram alone, and Close returns', async () => {
    const { page } = stage.browser;
    await page.goto(`${stage.course.origin}/lessons/services/`);
    await page.locator('dplab-mermaid[data-rendered]').first().waitFor({ timeout: 20_000 });
    await page.locator('dplab-mermaid .dplab-diagram-button', { hasText: 'Full screen' }).first().click();
    const dialog = page.locator('dialog.dplab-diagram-dialog[open]');
    await dialog.waitFor();
    const [d] = await measure(page, 'dialog.dplab-diagram-dialog');
    expect(d.minLabelPx).toBeGreaterThanOrEqual(12);
    await screenshot(page, 'lesson-services-full-screen');
    await dialog.getByRole('button', { name: 'Close' }).click();
    expect(await page.locator('dialog.dplab-diagram-dialog').count()).toBe(0);
  });

  it('every lesson diagram fits its column at 1280 and 390 px, zooms both ways, and full screen fits the window', async () => {
    const { page } = stage.browser;
    const scale = (root: string) =>
      page.evaluate(
        (r) => Number([...document.querySelectorAll<SVGSVGElement>(`${r} svg`)].find((x) => x.getClientRects().length)!.dataset.scale),
        root,
      );
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      for (const lesson of LESSONS) {
        await page.goto(`${stage.course.origin}/lessons/${lesson}/`);
        await expect.poll(() => page.locator('dplab-mermaid:not([data-rendered])').count(), { timeout: 20_000 }).toBe(0);
        for (const d of await measure(page, 'dplab-mermaid')) {
          expect(d.fits, `${lesson} at ${width} px: the diagram fits its column`).toBe(true);
          expect(d.minLabelPx, `${lesson} at ${width} px: smallest label`).toBeGreaterThanOrEqual(12);
        }
      }
    }
    // Zoom both ways on the iptables fan-out, at a laptop's size and a phone's.
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(`${stage.course.origin}/lessons/iptables/`);
      const diagram = page.locator('dplab-mermaid[data-rendered]').first();
      await diagram.waitFor({ timeout: 20_000 });
      const first = await scale('dplab-mermaid');
      await diagram.getByRole('button', { name: 'Zoom out' }).click();
      expect(await scale('dplab-mermaid')).toBeLessThan(first);
      expect(Math.min(...(await measure(page, 'dplab-mermaid')).map((d) => d.minLabelPx))).toBeGreaterThanOrEqual(12);
      await diagram.getByRole('button', { name: 'Zoom in' }).click();
      await diagram.getByRole('button', { name: 'Zoom in' }).click();
      expect(await scale('dplab-mermaid')).toBeGreaterThan(first);
      await diagram.getByRole('button', { name: 'Full screen' }).click();
      const dialog = page.locator('dialog.dplab-diagram-dialog[open]');
      await dialog.waitFor();
      const fit = await page.evaluate(() => {
        const view = document.querySelector<HTMLElement>('dialog.dplab-diagram-dialog .dplab-diagram-view')!;
        const box = document.querySelector('dialog.dplab-diagram-dialog')!.getBoundingClientRect();
        return {
          wide: view.scrollWidth <= view.clientWidth + 1,
          tall: view.scrollHeight <= view.clientHeight + 1,
          inWindow: box.right <= innerWidth && box.bottom <= innerHeight,
        };
      });
      expect(fit, `full screen at ${width} px`).toEqual({ wide: true, tall: true, inWindow: true });
      await screenshot(page, `lesson-iptables-full-screen-${width}`);
      await dialog.getByRole('button', { name: 'Close' }).click();
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('explorer diagrams side by side: labels ≥ 12 px, not cut off on the right', async () => {
    const { page } = stage.browser;
    await page.goto(`${stage.course.origin}/explorer/`);
    await expect.poll(() => page.locator('dplab-dataplane .dp-diagram[data-rendered]').count(), { timeout: 20_000 }).toBe(2);
    const measured = await measure(page, 'dplab-dataplane');
    expect(measured).toHaveLength(2);
    for (const d of measured) {
      expect(d.minLabelPx).toBeGreaterThanOrEqual(12);
      expect(d.viewRight).toBeLessThanOrEqual(d.contentRight);
      expect(d.fits).toBe(true);
    }
    await page.locator('dplab-dataplane .dp-diagram').first().scrollIntoViewIfNeeded();
    await screenshot(page, 'explorer-diagrams');
  });

  it(
    'explorer: a path with three backends fits its column in every mode, at 1280 and 390 px, in both themes',
    { timeout: 240_000 },
    async () => {
      const { page } = stage.browser;
      // Each mode's NodePort: a ClusterIP and a NodePort frontend, three backends each, and the
      // external chain's rules (kube-proxy) beside the path.
      const fixtures = ['iptables-save/nodeport', 'nft-json/etp-local-with-endpoints', 'ipvsadm/nodeport', 'cilium-json/nodeport'];
      for (const scheme of ['light', 'dark'] as const) {
        await page.evaluate((s) => localStorage.setItem('starlight-theme', s), scheme);
        for (const width of [1280, 390]) {
          await page.setViewportSize({ width, height: 800 });
          await page.goto(`${stage.course.origin}/explorer/`);
          // It reads its fixtures once on screen (site/client/when-shown.ts): below the fold on a phone.
          await page.evaluate(() => document.querySelector('dplab-dataplane')?.scrollIntoView());
          const column = page.locator('dplab-dataplane .dp-column').first();
          await column.locator('.dp-diagram[data-rendered]').waitFor({ timeout: 20_000 });
          for (const fixture of fixtures) {
            await column.locator('select.dp-source').selectOption(`fixture:${fixture}`);
            await column.getByRole('button', { name: 'Refresh' }).click();
            await column.locator('.dp-diagram[data-rendered]').waitFor({ timeout: 20_000 });
            const backends = await column.locator('.dp-shares tbody tr').count();
            expect(backends, `${fixture}: rows of the shares table`).toBeGreaterThanOrEqual(3);
            const [d] = await measure(page, 'dplab-dataplane .dp-column:first-of-type');
            const where = `${fixture} at ${width} px, ${scheme}`;
            expect(d.fits, `${where}: the diagram, ${d.drawnPx} px wide, fits its ${d.columnPx} px column`).toBe(true);
            console.log(
              `[explorer] ${where}: drawn ${d.drawnPx} px in a ${d.columnPx} px column, smallest label ${d.minLabelPx.toFixed(1)} px`,
            );
            expect(d.minLabelPx, `${where}: smallest label`).toBeGreaterThanOrEqual(12);
            expect(d.viewRight, `${where}: inside the page`).toBeLessThanOrEqual(d.contentRight);
          }
          await column.locator('.dp-diagram').scrollIntoViewIfNeeded();
          await screenshot(page, `explorer-three-backends-${width}-${scheme}`);
        }
      }
      await page.evaluate(() => localStorage.removeItem('starlight-theme'));
      await page.setViewportSize({ width: 1280, height: 800 });
    },
  );
});
