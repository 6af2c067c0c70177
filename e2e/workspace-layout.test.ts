/**
 * The lab workspace as a learner sees it, measured in Chromium at laptop and desktop sizes, on
 * a lab page and on /terminal/: after `seq 1 100` the last line and the prompt are inside the
 * terminal's visible box, xterm's rows sit on its cell grid (no site margins between them),
 * the terminal is wide (≥ 100 columns at 1920 px), and the page never scrolls sideways.
 * Screenshots of both sizes and of a phone go to test-results/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, chromiumNote, openSignedIn, startCourse, launchBrowser, type Browser, type Course } from './harness.ts';
import { screenshot, terminalGeometry } from './workspace-view.ts';

const SIZES = [
  { width: 1280, height: 800, minCols: 80 },
  { width: 1920, height: 1080, minCols: 100 },
];
const PAGES = [
  { path: '/labs/first-service/', name: 'lab', prompt: '^\\(iptables\\) workspace [$#]' },
  { path: '/terminal/', name: 'terminal', prompt: '^\\(dplab\\) workspace [$#]' },
];

describe.skipIf(!hasChromium)(`workspace layout${chromiumNote}`, { timeout: 60_000 }, () => {
  let course: Course;
  let browser: Browser;

  beforeAll(async () => {
    course = await startCourse();
    browser = await launchBrowser();
    await openSignedIn(browser.page, course, '/');
    // A fresh page per size: no saved split or mode from another test (the sign-in token stays).
    await browser.page.evaluate(() =>
      Object.keys(localStorage)
        .filter((k) => k !== 'dplab.token')
        .forEach((k) => localStorage.removeItem(k)),
    );
  });
  afterAll(async () => {
    await browser?.close();
    await course?.close();
  });

  for (const pg of PAGES) {
    for (const size of SIZES) {
      it(`${pg.path} at ${size.width}×${size.height}: the last line and the prompt stay visible, rows on the grid`, async () => {
        const { page } = browser;
        await page.setViewportSize({ width: size.width, height: size.height });
        await page.goto(`${course.origin}${pg.path}`);
        await page.waitForSelector('dplab-terminal:not([node])[data-state="open"]', { timeout: 20_000 });
        await expect.poll(async () => (await terminalGeometry(page, [pg.prompt])).found.length, { timeout: 10_000 }).toBe(1);
        await page.locator('dplab-terminal:not([node]) .xterm').click();
        await page.keyboard.type('seq 1 100; echo snake_case_END');
        await page.keyboard.press('Enter');
        await expect.poll(async () => (await terminalGeometry(page, ['snake_case_END'])).found.length, { timeout: 10_000 }).toBe(1);
        // The prompt after the output.
        await expect
          .poll(
            async () => {
              const g = await terminalGeometry(page, ['snake_case_END', pg.prompt]);
              return g.found.length === 2 && g.found[1].top > g.found[0].top;
            },
            { timeout: 10_000 },
          )
          .toBe(true);
        const g = await terminalGeometry(page, ['100', 'snake_case_END', pg.prompt]);
        await screenshot(page, `${pg.name}-${size.width}x${size.height}`);

        expect(g.found.map((f) => f.text.replace(/ +$/, ''))).toEqual([
          '100',
          'snake_case_END',
          expect.stringMatching(new RegExp(pg.prompt)),
        ]);
        for (const row of g.found) {
          expect(row.top, `"${row.text}" starts inside the terminal`).toBeGreaterThanOrEqual(g.box.top);
          expect(row.bottom, `"${row.text}" ends inside the terminal (bottom ${g.box.bottom})`).toBeLessThanOrEqual(g.box.bottom);
          expect(row.bottom, `"${row.text}" is inside the viewport`).toBeLessThanOrEqual(size.height);
        }
        // Every row is one cell high, and the next row starts right where it ends.
        const cell = g.cellHeight;
        expect(cell).toBeGreaterThan(10);
        for (const h of g.rowHeights) expect(Math.abs(h - cell)).toBeLessThan(0.5);
        for (const step of g.rowSteps) expect(Math.abs(step - cell)).toBeLessThan(0.5);
        expect(g.cols).toBeGreaterThanOrEqual(size.minCols);
        expect(g.page.scrollWidth, 'no horizontal scrollbar').toBeLessThanOrEqual(g.page.clientWidth);
      });
    }
  }

  it('on a phone the terminal is one tap away and fills the screen', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${course.origin}/labs/first-service/`);
    // Connected while its tab is in the background.
    await page.waitForSelector('dplab-terminal:not([node])[data-state="open"]', { timeout: 20_000, state: 'attached' });
    await screenshot(page, 'lab-phone-instructions');
    const tab = page.getByRole('tab', { name: 'Terminal', exact: true });
    const tabBox = (await tab.boundingBox())!;
    expect(tabBox.y + tabBox.height).toBeLessThanOrEqual(844);
    await tab.click();
    const box = (await page.locator('dplab-terminal:not([node])').boundingBox())!;
    expect(box.y).toBeLessThan(844 / 2);
    expect(box.y + box.height).toBeLessThanOrEqual(844);
    expect(box.height).toBeGreaterThan(844 / 3);
    await expect
      .poll(async () => (await terminalGeometry(page, ['^\\(iptables\\) workspace [$#]'])).found.length, { timeout: 10_000 })
      .toBe(1);
    await screenshot(page, 'lab-phone-terminal');
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
  });

  for (const theme of ['light', 'dark'] as const) {
    it(`on a phone (${theme}) no control in the lab's top bar is cut off or outside the screen; the mode picker says "iptables"`, async () => {
      const { page } = browser;
      await page.setViewportSize({ width: 390, height: 844 });
      await page.evaluate((t) => localStorage.setItem('starlight-theme', t), theme);
      await page.goto(`${course.origin}/labs/first-service/`);
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
      // The cluster panel has asked the runner (its error and fix are the bar's longest text).
      await page.waitForSelector('.dplab-cluster:not([hidden]) .dplab-cp-badge:not([data-state="loading"])', { timeout: 10_000 });
      await screenshot(page, `lab-phone-bar-${theme}`);
      const problems = await page.evaluate(() => {
        const out: string[] = [];
        const bar = document.querySelector<HTMLElement>('.dplab-ws-bar')!;
        const barBox = bar.getBoundingClientRect();
        const controls = bar.querySelectorAll<HTMLElement>(
          'button, select, input, a, label, progress, .dplab-ws-title, .dplab-setup, .dplab-cp-badge, .dplab-cp-error, .dplab-progress-text',
        );
        for (const el of controls) {
          if (!el.checkVisibility() || el.closest('.sr-only')) continue;
          const r = el.getBoundingClientRect();
          const name = `${el.tagName.toLowerCase()} "${(el.textContent ?? '').trim().slice(0, 40)}"`;
          if (r.left < -0.5 || r.right > innerWidth + 0.5) out.push(`${name} is outside the viewport (${r.left}–${r.right})`);
          if (r.left < barBox.left - 0.5 || r.right > barBox.right + 0.5) out.push(`${name} sticks out of the bar`);
          if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0)
            out.push(`${name} clips its text (${el.scrollWidth} > ${el.clientWidth})`);
        }
        // A select clips what it shows when its chosen option is wider than its box.
        for (const select of bar.querySelectorAll<HTMLSelectElement>('select')) {
          const probe = document.createElement('span');
          probe.style.cssText = `position:absolute;visibility:hidden;white-space:nowrap;font:${getComputedStyle(select).font}`;
          probe.textContent = select.selectedOptions[0]?.textContent ?? '';
          document.body.append(probe);
          const text = probe.getBoundingClientRect().width;
          probe.remove();
          const cs = getComputedStyle(select);
          const room = select.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 16; // the arrow
          if (text > room) out.push(`select shows "${probe.textContent}" (${text} px) in ${room} px`);
        }
        // Nothing in the bar overlaps anything else in it.
        const boxes = [
          ...bar.querySelectorAll<HTMLElement>(
            '.dplab-ws-title, .dplab-font-controls, .dplab-mode-picker, .dplab-cluster:not([hidden]), .dplab-progress',
          ),
        ]
          .filter((e) => e.checkVisibility())
          .map((e) => ({ e, r: e.getBoundingClientRect() }));
        for (const [i, a] of boxes.entries())
          for (const b of boxes.slice(i + 1))
            if (a.r.left < b.r.right - 0.5 && b.r.left < a.r.right - 0.5 && a.r.top < b.r.bottom - 0.5 && b.r.top < a.r.bottom - 0.5)
              out.push(`${a.e.className} overlaps ${b.e.className}`);
        return out;
      });
      expect(problems).toEqual([]);
      const select = page.getByRole('combobox', { name: 'Cluster' });
      expect(await select.evaluate((s: HTMLSelectElement) => s.selectedOptions[0].textContent)).toBe('iptables');
      // The full name stays the option's accessible name and the select's title.
      expect(await select.getAttribute('title')).toBe('kube-proxy, iptables mode');
      await expect.poll(() => page.getByRole('option', { name: 'kube-proxy, iptables mode' }).count()).toBe(1);
      // The keyboard still picks a mode.
      await select.focus();
      await page.keyboard.press('ArrowDown');
      expect(await select.inputValue()).not.toBe('iptables');
      expect(await select.getAttribute('title')).toMatch(/^kube-proxy, /);
      await page.keyboard.press('ArrowUp');
      expect(await select.inputValue()).toBe('iptables');
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
      await page.evaluate(() => localStorage.removeItem('starlight-theme'));
    });
  }

  it('at laptop width the mode picker shows the full name', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${course.origin}/labs/first-service/`);
    const select = page.getByRole('combobox', { name: 'Cluster' });
    expect(await select.evaluate((s: HTMLSelectElement) => s.selectedOptions[0].textContent)).toBe('kube-proxy, iptables mode');
  });

  it('the divider moves with the arrow keys and is remembered after a reload', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${course.origin}/labs/first-service/`);
    const sep = page.getByRole('separator', { name: 'Resize instructions and terminal' });
    const before = Number(await sep.getAttribute('aria-valuenow'));
    const width = async () => (await page.locator('.dplab-instructions').boundingBox())!.width;
    const w0 = await width();
    await sep.focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    expect(Number(await sep.getAttribute('aria-valuenow'))).toBe(before + 10);
    await expect.poll(width).toBeGreaterThan(w0 + 100);
    await page.reload();
    expect(Number(await page.getByRole('separator', { name: 'Resize instructions and terminal' }).getAttribute('aria-valuenow'))).toBe(
      before + 10,
    );
    await page.evaluate(() => localStorage.removeItem('dplab:split'));
  });
});
