/**
 * The lab workspace as a learner sees it, measured in Chromium at laptop and desktop sizes, on
 * a lab page and on /terminal/: after `seq 1 100` the last line and the prompt are inside the
 * terminal's visible box, xterm's rows sit on its cell grid (no site margins between them),
 * the terminal is wide (≥ 100 columns at 1920 px), and the page never scrolls sideways.
 * With Docker not running, the cluster error and its fix are whole and readable at every size.
 * Screenshots of both sizes and of a phone go to test-results/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonDownRules, scenario } from '../test/fixtures/cluster-scenarios.ts';
import {
  hasChromium,
  chromiumNote,
  openSignedIn,
  stageWithDoubles,
  startCourse,
  launchBrowser,
  type Browser,
  type Course,
  type Stage,
} from './harness.ts';
import { fontSets } from './font-sets.ts';
import { barLayout, screenshot, terminalGeometry, terminalText } from './workspace-view.ts';

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

  it('on a phone a command in a snippet wraps between words, not inside one', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${course.origin}/labs/first-service/`);
    await page.locator('.dplab-snippet-row pre').first().waitFor();
    const breaks = await page.evaluate(() => {
      const found: string[] = [];
      let wrapped = 0;
      for (const pre of document.querySelectorAll<HTMLElement>('.dplab-snippet-row pre')) {
        const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
        const chars: { ch: string; top: number; node: Text; i: number }[] = [];
        for (let n = walker.nextNode() as Text | null; n; n = walker.nextNode() as Text | null) {
          for (let i = 0; i < n.data.length; i++) {
            const r = document.createRange();
            r.setStart(n, i);
            r.setEnd(n, i + 1);
            const rect = r.getClientRects()[0];
            if (rect) chars.push({ ch: n.data[i], top: rect.top, node: n, i });
          }
        }
        const width = pre.clientWidth;
        for (let k = 1; k < chars.length; k++) {
          const [a, b] = [chars[k - 1], chars[k]];
          if (b.top - a.top < 2 || a.ch === '\n') continue;
          wrapped++;
          if (/\s/.test(a.ch) || /\s/.test(b.ch)) continue;
          // A word wider than the whole line has to be cut somewhere.
          let s = k - 1;
          while (s > 0 && !/\s/.test(chars[s - 1].ch)) s--;
          let e = k;
          while (e < chars.length - 1 && !/\s/.test(chars[e + 1].ch)) e++;
          const r = document.createRange();
          r.setStart(chars[s].node, chars[s].i);
          r.setEnd(chars[e].node, chars[e].i + 1);
          const wordWidth = [...r.getClientRects()].reduce((w, x) => w + x.width, 0);
          const text = (from: number, to: number) =>
            chars
              .slice(from, to)
              .map((c) => c.ch)
              .join('');
          if (wordWidth <= width) found.push(`${text(s, k)}|${text(k, e + 1)}`);
        }
      }
      return { found, wrapped };
    });
    // The page has long commands: some of them must wrap at this width, or this looked at nothing.
    expect(breaks.wrapped).toBeGreaterThan(0);
    expect(breaks.found, 'words broken across lines').toEqual([]);
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

  it('at desktop width the mode picker shows the full name; at laptop width the short one, still named "Cluster"', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 1920, height: 1080 });
    await page.goto(`${course.origin}/labs/first-service/`);
    const select = page.getByRole('combobox', { name: 'Cluster' });
    expect(await select.evaluate((s: HTMLSelectElement) => s.selectedOptions[0].textContent)).toBe('kube-proxy, iptables mode');
    expect(await page.locator('.dplab-mode-picker-label').isVisible()).toBe(true);
    // The one-row bar at 1280 px has no room for the full title and the word "Cluster" beside it.
    await page.setViewportSize({ width: 1280, height: 800 });
    await expect.poll(() => select.evaluate((s: HTMLSelectElement) => s.selectedOptions[0].textContent)).toBe('iptables');
    expect(await select.getAttribute('title')).toBe('kube-proxy, iptables mode');
    expect(await page.locator('.dplab-mode-picker-label').evaluate((e) => e.getBoundingClientRect().width)).toBeLessThanOrEqual(1);
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

/**
 * With Docker not running the bar shows the cluster error and its fix, the longest thing in it.
 * At every size, dark and light, all of it can be read: no box of its own or of the bar cuts it
 * short (the workspace is the one thing that scrolls), it never lies under the phone's tabs, and
 * scrolled to, its first and last lines are what is on top there. On a phone the tabs stay at
 * the top while the instructions scroll, and the terminal and back keep the reading place.
 */
describe.skipIf(!hasChromium)(`workspace layout with Docker not running${chromiumNote}`, { timeout: 60_000 }, () => {
  let stage: Stage;
  const LAB = '/labs/internal-traffic-local/';

  beforeAll(async () => {
    stage = await stageWithDoubles(scenario('iptables', daemonDownRules()));
    await openSignedIn(stage.browser.page, stage.course, '/');
  });
  afterAll(async () => {
    await stage?.close();
  });

  const CASES = [
    { width: 390, height: 844, theme: 'dark' },
    { width: 390, height: 844, theme: 'light' },
    { width: 844, height: 390, theme: 'dark' },
    { width: 1024, height: 600, theme: 'light' },
    { width: 1280, height: 720, theme: 'dark' },
  ] as const;
  for (const c of CASES) {
    it(`${c.width}×${c.height} (${c.theme}): the error and its fix are whole, never under the tabs, readable line by line`, async () => {
      const { page } = stage.browser;
      await page.setViewportSize({ width: c.width, height: c.height });
      await page.evaluate((t) => localStorage.setItem('starlight-theme', t), c.theme);
      await page.goto(`${stage.course.origin}${LAB}`);
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(c.theme);
      const error = page.locator('.dplab-cluster:not([hidden]) .dplab-cp-error');
      await error.waitFor({ timeout: 15_000 });
      await screenshot(page, `lab-docker-down-${c.width}x${c.height}-${c.theme}`);
      const text = (await error.innerText()).replace(/\s+/g, ' ');
      expect(text).toMatch(
        /^Error: Docker is not running: .* Fix: Start Docker: .* install one: https:\/\/docs\.docker\.com\/engine\/install\/ \(or Docker Desktop\)\.$/,
      );

      const layout = await page.evaluate(() => {
        const err = document.querySelector<HTMLElement>('.dplab-cluster:not([hidden]) .dplab-cp-error')!;
        const workspace = document.querySelector<HTMLElement>('dplab-workspace')!;
        const tabs = document.querySelector<HTMLElement>('.dplab-ws-switch')!;
        // Every box between the error and the workspace that would cut what does not fit in it.
        const clipping: string[] = [];
        for (let el: HTMLElement | null = err; el && el !== workspace; el = el.parentElement) {
          const cs = getComputedStyle(el);
          if (cs.overflowY !== 'visible' && el.scrollHeight > el.clientHeight + 1)
            clipping.push(`${el.tagName.toLowerCase()}.${el.classList[0]} shows ${el.clientHeight} of ${el.scrollHeight} px`);
        }
        const e = err.getBoundingClientRect();
        const t = tabs.getBoundingClientRect();
        return {
          clipping,
          underTabs: tabs.checkVisibility() && e.top < t.bottom - 0.5 && t.top < e.bottom - 0.5 && e.left < t.right && t.left < e.right,
          page: { scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth },
        };
      });
      expect(layout.clipping).toEqual([]);
      expect(layout.underTabs, 'the error lies under the Instructions/Terminal tabs').toBe(false);
      expect(layout.page.scrollWidth).toBeLessThanOrEqual(layout.page.clientWidth);

      // The setup line beside the error is long too: it wraps its own words, so "Present" is not
      // left on a line of its own and the progress bar stays beside its count (at 1280 and 1024
      // both were stranded). Where there is room (≥ 800 px) all of it shares the bar's line.
      const row = await page.evaluate(() => {
        const mid = (sel: string) => {
          const r = document.querySelector(sel)!.getBoundingClientRect();
          return r.top + r.height / 2;
        };
        return {
          bar: mid('.dplab-progress progress'),
          count: mid('.dplab-progress-text'),
          reset: mid('.dplab-progress [data-action="reset-lab"]'),
          present: mid('.dplab-progress [data-present-toggle]'),
        };
      });
      expect(Math.abs(row.count - row.bar), 'the progress bar and its count on one line').toBeLessThan(4);
      expect(Math.abs(row.present - row.reset), '"Reset lab" and "Present" on one line').toBeLessThan(4);
      if (c.width >= 800) expect(Math.abs(row.present - row.bar), '"Present" on the progress bar\'s line').toBeLessThan(4);

      // Scrolled to (as far as the workspace needs), its first and its last line are on top.
      for (const block of ['start', 'end'] as const) {
        const hit = await page.evaluate((block) => {
          const err = document.querySelector<HTMLElement>('.dplab-cluster:not([hidden]) .dplab-cp-error')!;
          err.scrollIntoView({ block });
          const range = document.createRange();
          range.selectNodeContents(err);
          const lines = [...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0);
          const line = block === 'start' ? lines[0] : lines[lines.length - 1];
          const x = line.left + Math.min(line.width / 2, 20);
          const y = line.top + line.height / 2;
          const top = document.elementFromPoint(x, y);
          return {
            inView: y > 0 && y < innerHeight,
            onTop: !!top && err.contains(top),
            what: top ? `${top.tagName} ${top.className}` : null,
          };
        }, block);
        expect(hit, `the error's ${block === 'start' ? 'first' : 'last'} line`).toMatchObject({ inView: true, onTop: true });
      }
      await page.evaluate(() => document.querySelector('dplab-workspace')!.scrollTo({ top: 0 }));
    });
  }

  it('on a phone the tabs stay at the top while the instructions scroll; the terminal and back keep the place', async () => {
    const { page } = stage.browser;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${stage.course.origin}${LAB}`);
    await page.locator('.dplab-cluster:not([hidden]) .dplab-cp-error').waitFor({ timeout: 15_000 });
    const third = page.locator('.dplab-step').nth(2);
    await third.evaluate((s) => s.scrollIntoView({ block: 'start' }));
    const place = async () => (await third.boundingBox())!.y;
    const at = await place();
    const tab = page.getByRole('tab', { name: 'Terminal', exact: true });
    const tabBox = (await tab.boundingBox())!;
    // The step starts below the tabs, which are on screen and on top.
    expect(tabBox.y).toBeGreaterThanOrEqual(0);
    expect(at).toBeGreaterThanOrEqual(tabBox.y + tabBox.height - 0.5);
    expect(
      await page.evaluate(({ x, y }) => document.elementFromPoint(x, y)?.closest('[role="tab"]')?.textContent, {
        x: tabBox.x + tabBox.width / 2,
        y: tabBox.y + tabBox.height / 2,
      }),
    ).toBe('Terminal');
    await screenshot(page, 'lab-docker-down-phone-scrolled');
    // A tap where the tab is (a locator's click would first scroll the tab's place in the page into view).
    await page.mouse.click(tabBox.x + tabBox.width / 2, tabBox.y + tabBox.height / 2);
    expect(await tab.getAttribute('aria-selected')).toBe('true');
    const box = (await page.locator('dplab-terminal:not([node])').boundingBox())!;
    expect(box.y).toBeLessThan(844 / 2);
    expect(box.y + box.height).toBeLessThanOrEqual(844);
    // The terminal's notice came while its tab was in the background: it is broken between
    // words for the width it has now, not for the width it guessed then.
    await expect
      .poll(async () => (await terminalText(page)).lines.map((l) => l.text).join('\n'), { timeout: 15_000 })
      .toMatch(/\(or Docker Desktop\)\.\n\(iptables\) workspace [$#]/);
    const term = await terminalText(page);
    await screenshot(page, 'lab-docker-down-phone-terminal');
    expect(term.cols).toBeLessThan(50);
    expect(term.midWord).toEqual([]);
    expect(term.lines.map((l) => l.text).join(' ')).toMatch(/The iptables cluster cannot be checked: Docker is not running: /);
    await page.getByRole('tab', { name: 'Instructions', exact: true }).click();
    expect(Math.abs((await place()) - at)).toBeLessThan(1);
  });
});

/**
 * While a cluster starts, at 1280×800, under each font set (e2e/font-sets.ts: the machine's own
 * and the ones Chromium gets on other machines; this bar once wrapped to five lines there, and
 * with Noto Sans Mono's taller rows left the terminal 18 rows): the bar is one row and the
 * terminal keeps at least 24 rows; from 1024 px up the rest of the bar stays one row. The provisioning
 * progress is one line, the current step and its state, and a disclosure button shows every
 * step; a failed step, its error and its fix are whole with the steps folded. One runner, one
 * Chromium per font set, all watching the same cluster start.
 */
describe.skipIf(!hasChromium)(`workspace bar while a cluster starts, under each font set${chromiumNote}`, { timeout: 60_000 }, () => {
  const LAB = '/labs/first-service/';
  /** Long enough for every font set's measurements while it runs; then it fails. */
  const CREATE_MS = 15_000;
  const CREATE_FAILS = 'ERROR: failed to create cluster: could not find a log line that matches "Reached target .*Multi-User System.*"\n';
  const sets = fontSets();
  let stage: Stage;
  const browsers = new Map<string, Browser>();
  const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  const panelOf = (page: Browser['page']) => page.locator('.dplab-ws-bar .dplab-cluster:not([hidden]) dplab-cluster-panel');
  const toggleOf = (page: Browser['page']) => panelOf(page).locator('button[aria-expanded]');

  beforeAll(async () => {
    stage = await stageWithDoubles(
      scenario('iptables', [
        { tool: 'kind', match: '^create cluster --name dplab-iptables ', delayMs: CREATE_MS, stderr: CREATE_FAILS, exit: 1 },
      ]),
    );
    for (const fonts of sets) {
      if (fonts.missing) continue;
      const browser = fonts.env ? await launchBrowser({ env: fonts.env }) : stage.browser;
      browsers.set(fonts.name, browser);
      console.log(`[e2e] font set "${fonts.name}": fc-match ${JSON.stringify(fonts.matches)}`);
      await browser.page.setViewportSize({ width: 1280, height: 800 });
      await openSignedIn(browser.page, stage.course, LAB);
    }
  });
  afterAll(async () => {
    for (const b of browsers.values()) if (b !== stage?.browser) await b.close();
    await stage?.close();
  });

  for (const fonts of sets) {
    const skip = fonts.missing ? ` (skipped: ${fonts.missing})` : '';
    it.skipIf(!!fonts.missing)(
      `fonts ${fonts.name}, no cluster, 1280×800: the bar is one row, the terminal has ≥ 24 rows${skip}`,
      async () => {
        const { page } = browsers.get(fonts.name)!;
        await expect.poll(() => panelOf(page).getAttribute('data-state'), { timeout: 15_000 }).toBe('absent');
        await page.waitForSelector('dplab-terminal:not([node])[data-state="open"]', { timeout: 20_000 });
        await expect.poll(() => page.locator('.dplab-setup').getAttribute('data-state'), { timeout: 10_000 }).toBe('waiting');
        const bar = await barLayout(page);
        await screenshot(page, `bar-${slug(fonts.name)}-absent-1280x800`);
        console.log(
          `[e2e] fonts "${fonts.name}", no cluster, 1280×800: bar ${bar.height} px, lines ${JSON.stringify(bar.lines)}, terminal ${bar.terminalRows} rows of ${bar.terminalCell.toFixed(1)} px`,
        );
        expect(bar.lines, 'the bar is one row').toHaveLength(1);
        expect(bar.wrapped, 'pieces of the bar that wrap').toEqual([]);
        expect(bar.terminalRows).toBeGreaterThanOrEqual(24);
        expect(bar.terminalInView).toBe(true);
      },
    );
  }

  it('Start', async () => {
    const { page } = stage.browser;
    await panelOf(page).getByRole('button', { name: 'Start', exact: true }).click();
  });

  for (const fonts of sets) {
    const skip = fonts.missing ? ` (skipped: ${fonts.missing})` : '';
    it.skipIf(!!fonts.missing)(
      `fonts ${fonts.name}, starting: one row at 1280×800 with the current step and its state, ≥ 24 terminal rows; the rest one row at 1024${skip}`,
      async () => {
        const { page } = browsers.get(fonts.name)!;
        const panel = panelOf(page);
        const shown = panel.locator('.dplab-cp-actions-list li:visible .dplab-cp-label');
        // One line: the current step with its state (the host check comes first, then the create that takes a while).
        await expect.poll(() => shown.allTextContents(), { timeout: 10_000 }).toEqual(['Create the kind cluster (3 nodes) (running)']);
        // The terminal fits itself to what the bar leaves.
        await expect.poll(async () => (await barLayout(page)).terminalRows, { timeout: 5_000 }).toBeGreaterThanOrEqual(24);
        const bar = await barLayout(page);
        await screenshot(page, `bar-${slug(fonts.name)}-starting-1280x800`);
        console.log(
          `[e2e] fonts "${fonts.name}", starting, 1280×800: bar ${bar.height} px, lines ${JSON.stringify(bar.lines)}, terminal ${bar.terminalRows} rows of ${bar.terminalCell.toFixed(1)} px`,
        );
        expect(bar.lines, 'the bar is one row').toHaveLength(1);
        expect(bar.wrapped, 'pieces of the bar that wrap').toEqual([]);
        expect(bar.terminalInView).toBe(true);
        // Still one line, and where it is among the others (the image load, step 2, starts beside it).
        expect(await shown.allTextContents()).toEqual(['Create the kind cluster (3 nodes) (running)']);
        expect(await toggleOf(page).innerText()).toMatch(/^Step 3 of \d+/);
        expect(await toggleOf(page).getAttribute('aria-expanded')).toBe('false');

        await page.setViewportSize({ width: 1024, height: 768 });
        await expect.poll(async () => (await barLayout(page)).lines.length, { timeout: 5_000 }).toBeLessThanOrEqual(2);
        const narrow = await barLayout(page);
        await screenshot(page, `bar-${slug(fonts.name)}-starting-1024x768`);
        console.log(
          `[e2e] fonts "${fonts.name}", starting, 1024×768: bar ${narrow.height} px, lines ${JSON.stringify(narrow.lines)}, terminal ${narrow.terminalRows} rows`,
        );
        // Everything but the progress on one row; the progress one line of its own at most.
        const rest = narrow.lines.filter((l) => !l.every((piece) => piece === 'steps' || piece === 'provisioning'));
        expect(rest, 'the rest of the bar is one row').toHaveLength(1);
        expect(narrow.wrapped).toEqual([]);
        await page.setViewportSize({ width: 1280, height: 800 });
      },
    );
  }

  for (const fonts of sets) {
    const skip = fonts.missing ? ` (skipped: ${fonts.missing})` : '';
    it.skipIf(!!fonts.missing)(`fonts ${fonts.name}: the steps expand and fold from the keyboard${skip}`, async () => {
      const { page } = browsers.get(fonts.name)!;
      const button = toggleOf(page);
      const list = panelOf(page).locator('.dplab-cp-actions-list');
      expect(await button.getAttribute('aria-controls')).toBe(await list.getAttribute('id'));
      // Reached with Tab, like any button: next after the mode picker.
      await page.locator('select[data-action="mode"]').focus();
      await page.keyboard.press('Tab');
      expect(await button.evaluate((b) => b === document.activeElement)).toBe(true);
      await page.keyboard.press('Enter');
      await expect.poll(() => button.getAttribute('aria-expanded')).toBe('true');
      const all = await list.locator('li:visible .dplab-cp-label').allTextContents();
      expect(all.length).toBeGreaterThan(3);
      expect(all.slice(0, 3)).toEqual([
        'Check Docker, kind and the host (done)',
        // Done already: this stage has no lab image to put in.
        'Prepare the node image with the lab images (done)',
        'Create the kind cluster (3 nodes) (running)',
      ]);
      await screenshot(page, `bar-${slug(fonts.name)}-starting-expanded-1280x800`);
      // The panel draws itself again on every event: the list stays open and the button keeps focus.
      await page.waitForTimeout(1_200);
      expect(await button.getAttribute('aria-expanded')).toBe('true');
      await page.keyboard.press('Space');
      await expect.poll(() => button.getAttribute('aria-expanded')).toBe('false');
      expect(await list.locator('li:visible').count()).toBe(1);
      expect(await button.evaluate((b) => b === document.activeElement)).toBe(true);
    });
  }

  for (const fonts of sets) {
    const skip = fonts.missing ? ` (skipped: ${fonts.missing})` : '';
    it.skipIf(!!fonts.missing)(
      `fonts ${fonts.name}: a failed step, its error and its fix are whole with the steps folded${skip}`,
      async () => {
        const { page } = browsers.get(fonts.name)!;
        const panel = panelOf(page);
        const error = panel.locator('.dplab-cp-error');
        await error.waitFor({ timeout: CREATE_MS + 15_000 });
        await screenshot(page, `bar-${slug(fonts.name)}-failed-1280x800`);
        expect(await toggleOf(page).getAttribute('aria-expanded')).toBe('false');
        const failed = panel.locator('.dplab-cp-actions-list li:visible .dplab-cp-label');
        expect(await failed.allTextContents()).toEqual(['Create the kind cluster (3 nodes) (failed)']);
        expect((await error.innerText()).replace(/\s+/g, ' ')).toMatch(/^Error: Starting the iptables cluster failed .+ Fix: .+/);
        // Nothing folds, hides or cuts it.
        const hiding = await error.evaluate((err: HTMLElement) => {
          const out: string[] = [];
          const workspace = document.querySelector('dplab-workspace')!;
          for (let el: HTMLElement | null = err; el && el !== workspace; el = el.parentElement) {
            const cs = getComputedStyle(el);
            const name = `${el.tagName.toLowerCase()}.${el.classList[0] ?? ''}`;
            if (el.hidden || cs.display === 'none' || cs.visibility === 'hidden') out.push(`${name} hides it`);
            if (el instanceof HTMLDetailsElement && !el.open) out.push(`${name} is a closed <details> around it`);
            if (cs.overflowY !== 'visible' && el.scrollHeight > el.clientHeight + 1) out.push(`${name} cuts it`);
            if (cs.overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1) out.push(`${name} cuts it sideways`);
          }
          return out;
        });
        expect(hiding).toEqual([]);
        expect(await error.locator(':scope > p').evaluateAll((ps) => ps.length === 2 && ps.every((p) => p.checkVisibility()))).toBe(true);
      },
    );
  }
});
