/**
 * Presenter mode in Chromium, on the runner over the cluster test doubles: the presenter's
 * terminal reaches a second browser (the viewer link) and a learner's Follow the instructor tab
 * on another runner, read-only (what the viewer types never reaches the shell); the presenter
 * view at 1920×1080 (large text, chrome hidden, high contrast, one step, keys); and
 * fast-forwarding the cluster to step 3 from the presenter controls.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { firstServiceScenario } from '../test/fixtures/first-service-scenario.ts';
import { daemonDownRules, healthyRules } from '../test/fixtures/cluster-scenarios.ts';
import {
  hasChromium,
  chromiumNote,
  launchBrowser,
  openSignedIn,
  stageWithDoubles,
  startCourse,
  type Browser,
  type Course,
  type Stage,
} from './harness.ts';
import { terminalText } from './workspace-view.ts';

const LAB = '/labs/first-service/';
/** Screenshots stay for a person to look at; the scratch folder goes. */
const shots = join(tmpdir(), 'dplab-e2e-presenter');
mkdirSync(shots, { recursive: true });
const scratch = mkdtempSync(join(tmpdir(), 'dplab-e2e-viewer-'));

const rows = (page: Page, selector: string) => page.locator(`${selector} .xterm-rows`).textContent();

/**
 * What the projector shows above the lesson and the terminal: the height of the chrome (the
 * top of the panes), every visible control of the bar whose text does not fit it or that lies
 * outside the window, the mode picker's shown label against its room, and the cluster state.
 */
function barGeometry(page: Page) {
  return page.evaluate(() => {
    const bar = document.querySelector<HTMLElement>('.dplab-ws-bar')!;
    const shown = (el: Element) => el.checkVisibility({ visibilityProperty: true });
    const name = (el: Element) =>
      `${el.tagName.toLowerCase()}${el.className ? `.${String(el.className).split(' ')[0]}` : ''} "${(el.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 40)}"`;
    const controls = [...bar.querySelectorAll('button, select, summary, label, .dplab-cp-badge, .dplab-present-where')].filter(shown);
    const clipped = controls.filter((el) => el.scrollWidth > el.clientWidth + 1).map(name);
    const outside = controls
      .filter((el) => {
        const r = el.getBoundingClientRect();
        return r.left < 0 || r.right > innerWidth + 0.5 || r.top < 0 || r.bottom > bar.getBoundingClientRect().bottom + 0.5;
      })
      .map(name);
    // A select clips its label without overflowing: measure the chosen label in the select's font.
    const select = bar.querySelector<HTMLSelectElement>('.dplab-mode-picker select');
    let mode: { label: string; textWidth: number; room: number } | null = null;
    if (select && shown(select)) {
      const cs = getComputedStyle(select);
      const probe = document.createElement('span');
      probe.style.cssText = `position:absolute;visibility:hidden;white-space:pre;font:${cs.font};letter-spacing:${cs.letterSpacing}`;
      probe.textContent = select.selectedOptions[0]?.textContent ?? '';
      document.body.append(probe);
      const arrow = 20; // the native drop-down arrow
      mode = {
        label: probe.textContent,
        textWidth: probe.getBoundingClientRect().width,
        room: select.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - arrow,
      };
      probe.remove();
    }
    const error = [...bar.querySelectorAll<HTMLElement>('.dplab-cp-error')].find(shown);
    const errorBox = error?.getBoundingClientRect();
    return {
      chrome: document.querySelector('.dplab-panes')!.getBoundingClientRect().top,
      rows: Math.round(bar.getBoundingClientRect().height),
      clipped,
      outside,
      mode,
      badge: [...bar.querySelectorAll('.dplab-cp-badge')].find(shown)?.textContent ?? null,
      error: error
        ? {
            text: error.innerText.replace(/\s+/g, ' ').trim(),
            fontSize: parseFloat(getComputedStyle(error).fontSize),
            inView:
              errorBox!.top >= 0 && errorBox!.bottom <= bar.getBoundingClientRect().bottom + 0.5 && errorBox!.right <= innerWidth + 0.5,
          }
        : null,
    };
  });
}

describe.skipIf(!hasChromium)(`presenter mode in the browser${chromiumNote}`, { timeout: 120_000 }, () => {
  let stage: Stage;
  let viewer: Browser;

  beforeAll(async () => {
    // Docker answers as on a machine with no lab cluster yet (the cluster is "Not running"); with
    // `docker: down` in the state the daemon is not reachable, as when Docker Desktop is not started.
    const lab = firstServiceScenario('iptables');
    stage = await stageWithDoubles(
      {
        rules: [...lab.rules, ...daemonDownRules({ docker: 'down' }), ...healthyRules('iptables')],
      },
      { clusterOf: 'iptables' },
    );
    viewer = await launchBrowser();
  });
  afterAll(async () => {
    await viewer?.close();
    await stage?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('the broadcast reaches a second browser read-only: the presenter’s output appears, the viewer’s typing goes nowhere', async () => {
    const { page } = stage.browser;
    await openSignedIn(page, stage.course, LAB);
    await page.waitForSelector('dplab-terminal:not([node])[data-state="open"]', { timeout: 30_000 });

    // The viewer link, as `dplab serve` prints it, in another browser with no runner token.
    const watcher = viewer.page;
    await watcher.setViewportSize({ width: 1920, height: 1080 });
    await watcher.goto(stage.course.server.viewerUrl);
    await watcher.waitForSelector('dplab-terminal-watch[data-state="watching"]', { timeout: 20_000 });
    expect(new URL(watcher.url()).hash).toBe('');
    expect(await watcher.evaluate(() => localStorage.getItem('dplab.token'))).toBeNull();

    await page.locator('dplab-terminal:not([node]) .xterm').click();
    await page.keyboard.type('echo PRESENTER-$((6*7))');
    await page.keyboard.press('Enter');
    await expect.poll(() => rows(watcher, 'dplab-terminal-watch'), { timeout: 10_000 }).toContain('PRESENTER-42');

    const planted = join(scratch, 'typed-by-viewer');
    await watcher.locator('dplab-terminal-watch .xterm').click();
    await watcher.keyboard.type(`touch ${planted}; echo VIEWER-$((1+1))`);
    await watcher.keyboard.press('Enter');
    // The presenter's next command is answered after anything the viewer could have sent.
    await page.keyboard.type('echo SYNC-$((2+3))');
    await page.keyboard.press('Enter');
    await expect.poll(() => rows(watcher, 'dplab-terminal-watch'), { timeout: 10_000 }).toContain('SYNC-5');
    await expect.poll(() => rows(page, 'dplab-terminal:not([node])'), { timeout: 10_000 }).toContain('SYNC-5');
    expect(await rows(page, 'dplab-terminal:not([node])')).not.toContain('VIEWER');
    expect(await rows(watcher, 'dplab-terminal-watch')).not.toContain('VIEWER-2');
    expect(existsSync(planted)).toBe(false);
    expect(stage.course.server.runner.broadcast.watcherCount).toBe(1);

    // Large on the projector: the presenter's 80-odd columns fill the 1920-pixel window.
    const font = Number(await watcher.locator('dplab-terminal-watch').getAttribute('data-font-size'));
    expect(font).toBeGreaterThanOrEqual(18);
    // The grid keeps the presenter's shape: inside the window, and filling it in one direction.
    const screen = (await watcher.locator('dplab-terminal-watch .xterm-screen').boundingBox())!;
    expect(screen.width).toBeLessThanOrEqual(1920);
    expect(screen.height).toBeLessThanOrEqual(1080);
    expect(Math.max(screen.width / 1920, screen.height / 1080)).toBeGreaterThan(0.6);
    await watcher.screenshot({ path: join(shots, 'viewer-1920.png') });
  });

  it('a learner on their own runner follows the instructor in a terminal tab, read-only', async () => {
    let learnerCourse: Course | undefined;
    const learner = await launchBrowser();
    try {
      learnerCourse = await startCourse();
      const lp = learner.page;
      // The instructor's link to the lab carries the viewer link: the Follow tab is there, its form filled in.
      await openSignedIn(lp, learnerCourse, `${LAB}?follow=${encodeURIComponent(stage.course.server.viewerUrl)}`);
      await lp.getByRole('tab', { name: 'Follow the instructor' }).click();
      expect(await lp.getByLabel('Viewer link from the instructor').inputValue()).toBe(stage.course.server.viewerUrl);
      await lp.getByRole('button', { name: 'Follow', exact: true }).click();
      const frame = lp.frameLocator('.dplab-follow-view iframe');
      await frame.locator('dplab-terminal-watch[data-state="watching"]').waitFor({ timeout: 20_000 });
      await expect.poll(() => frame.locator('.xterm-rows').textContent(), { timeout: 10_000 }).toContain('PRESENTER-42');
      await stage.browser.page.keyboard.type('echo FOLLOWED-$((4*4))');
      await stage.browser.page.keyboard.press('Enter');
      await expect.poll(() => frame.locator('.xterm-rows').textContent(), { timeout: 10_000 }).toContain('FOLLOWED-16');
      // The mirror's grid is scaled to the tab: inside it, and filling it in one direction.
      const view = (await lp.locator('.dplab-follow-view').boundingBox())!;
      const grid = (await frame.locator('.xterm-screen').boundingBox())!;
      expect(grid.width).toBeLessThanOrEqual(view.width);
      expect(grid.height).toBeLessThanOrEqual(view.height);
      expect(Math.max(grid.width / view.width, grid.height / view.height)).toBeGreaterThan(0.6);
      // The learner's own shell is untouched and still theirs.
      expect(learnerCourse.server.runner.broadcast.watcherCount).toBe(0);
      await lp.screenshot({ path: join(shots, 'learner-follow.png') });
    } finally {
      await learner.close();
      await learnerCourse?.close();
    }
  });

  it('presenter view at 1920×1080: large text, chrome hidden, high contrast, one step at a time, keys listed and working', async () => {
    const { page } = stage.browser;
    await page.setViewportSize({ width: 1920, height: 1080 });
    await page.goto(`${stage.course.origin}${LAB}?present`);
    await page.waitForSelector('html[data-present]');
    await page.waitForSelector('dplab-terminal:not([node])[data-state="open"]', { timeout: 30_000 });
    await expect.poll(() => rows(page, 'dplab-terminal:not([node])'), { timeout: 15_000 }).toContain('workspace');
    await expect.poll(() => page.locator('.dplab-present-viewer input').inputValue()).toBe(stage.course.server.viewerUrl);
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());

    const look = await page.evaluate(() => {
      const px = (el: Element | null) => (el ? parseFloat(getComputedStyle(el).fontSize) : 0);
      const header = document.querySelector<HTMLElement>('header.header');
      const visibleSteps = [...document.querySelectorAll<HTMLElement>('.dplab-step')].filter((s) => s.offsetParent !== null);
      return {
        headerShown: !!header && header.offsetParent !== null && header.getBoundingClientRect().height > 0,
        wsTop: document.querySelector('.dplab-ws')!.getBoundingClientRect().top,
        body: px(document.querySelector('.dplab-step-body p')),
        title: px(document.querySelector('.dplab-step[data-current] .dplab-step-title')),
        terminal: px(document.querySelector('dplab-terminal:not([node]) .xterm-rows')),
        background: getComputedStyle(document.querySelector('.dplab-instructions')!).backgroundColor,
        wsBackground: getComputedStyle(document.querySelector('.dplab-ws')!).backgroundColor,
        color: getComputedStyle(document.querySelector('.dplab-step-body p')!).color,
        visibleSteps: visibleSteps.map((s) => s.dataset.step),
        keys: [...document.querySelectorAll('.dplab-present-keys dt')].map((d) => d.textContent),
      };
    });
    expect(look.headerShown).toBe(false);
    expect(look.wsTop).toBe(0);
    expect(look.body).toBeGreaterThanOrEqual(26);
    expect(look.title).toBeGreaterThanOrEqual(36);
    expect(look.terminal).toBeGreaterThanOrEqual(26);
    expect(look.wsBackground).toBe('rgb(0, 0, 0)');
    expect(['rgba(0, 0, 0, 0)', 'rgb(0, 0, 0)']).toContain(look.background);
    expect(look.color).toBe('rgb(255, 255, 255)');
    expect(look.visibleSteps).toHaveLength(1);
    expect(look.keys.length).toBeGreaterThanOrEqual(7);
    expect(look.keys.join(' ')).toContain('Shift+P');
    await page.screenshot({ path: join(shots, 'presenter-1920.png') });

    // The lesson and the terminal get the screen: the chrome above them is at most a fifth of it.
    await expect.poll(() => page.locator('.dplab-cp-badge').first().textContent(), { timeout: 15_000 }).toBe('Not running');
    const bar = await barGeometry(page);
    console.log(`[presenter] 1920×1080: chrome ${bar.chrome} px (${((bar.chrome / 1080) * 100).toFixed(1)} %), bar ${bar.rows} px`);
    expect(bar.chrome).toBeLessThanOrEqual(1080 * 0.2);
    expect(bar.clipped).toEqual([]);
    expect(bar.outside).toEqual([]);
    expect(bar.mode!.textWidth).toBeLessThanOrEqual(bar.mode!.room);
    expect(bar.badge).toBe('Not running');
    // The terminal's notice (the cluster is not running) at this size: no word broken in two.
    await expect
      .poll(async () => (await terminalText(page)).lines.some((l) => l.text.startsWith('The iptables cluster')), { timeout: 15_000 })
      .toBe(true);
    expect((await terminalText(page)).midWord).toEqual([]);

    const current = () => page.evaluate(() => document.querySelector<HTMLElement>('.dplab-step[data-current]')?.dataset.step);
    const first = await current();
    await page.keyboard.press('n');
    const second = await current();
    expect(second).not.toBe(first);
    await page.keyboard.press('ArrowLeft');
    expect(await current()).toBe(first);
    await page.keyboard.press('h');
    await expect.poll(() => page.locator('.dplab-step[data-current] .dplab-hint-list li:not([hidden])').count()).toBe(1);
    // Typing in the terminal is never taken by the keys.
    await page.locator('dplab-terminal:not([node]) .xterm').click();
    await page.keyboard.type('echo n');
    expect(await current()).toBe(first);
    await page.keyboard.press('Enter');
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.keyboard.press('Escape');
    await page.waitForSelector('html:not([data-present])');
    expect(new URL(page.url()).search).toBe('');
    await page.keyboard.press('Shift+P');
    await page.waitForSelector('html[data-present]');
  });

  it('fast-forward from the presenter controls: the cluster is brought to step 3, steps 1–2 solved and checked', async () => {
    const { page } = stage.browser;
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    const steps = await page.evaluate(() => [...document.querySelectorAll<HTMLElement>('.dplab-step')].map((s) => s.dataset.step));
    while ((await page.evaluate(() => document.querySelector<HTMLElement>('.dplab-step[data-current]')?.dataset.step)) !== steps[2])
      await page.keyboard.press('ArrowRight');
    // The rarer controls wait behind More, which the keyboard opens.
    const goto = page.getByRole('button', { name: 'Bring cluster to this step' });
    expect(await goto.isVisible()).toBe(false);
    await page.locator('.dplab-present-more > summary').focus();
    await page.keyboard.press('Enter');
    expect(await goto.isVisible()).toBe(true);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Bring cluster to this step');
    await goto.click();
    expect(await page.locator('.dplab-present-more').getAttribute('open')).toBeNull();
    await page.waitForSelector('.dplab-present-progress[data-state="ready"]', { timeout: 60_000 });
    const progress = await page.locator('.dplab-present-progress').textContent();
    expect(progress).toMatch(/at the start of step 3/);
    expect(await page.locator('.dplab-present-progress li').count()).toBe(5);
    expect(await page.locator('.dplab-present-progress li[data-phase="end"]').count()).toBe(5);
    expect(stage.doubles.state()).toMatchObject({ s1: '1', s2: '1' });
    expect(stage.doubles.state().s3).toBeUndefined();
    await expect
      .poll(() => page.evaluate(() => [...document.querySelectorAll<HTMLElement>('.dplab-step')].map((s) => s.dataset.status)))
      .toEqual(['pass', 'pass', 'todo', 'todo']);
    await page.screenshot({ path: join(shots, 'presenter-goto.png') });
  });

  it('presenter view at 1280×720 with Docker not running: the error and its fix readable in a compact bar, nothing clipped', async () => {
    const { page } = stage.browser;
    stage.doubles.setState({ docker: 'down' });
    try {
      await page.setViewportSize({ width: 1280, height: 720 });
      await openSignedIn(page, stage.course, `${LAB}?present`);
      await page.waitForSelector('html[data-present]');
      await page.waitForSelector('dplab-cluster-panel .dplab-cp-error', { timeout: 15_000 });
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      const bar = await barGeometry(page);
      console.log(
        `[presenter] 1280×720, Docker down: chrome ${bar.chrome} px (${((bar.chrome / 720) * 100).toFixed(1)} %), bar ${bar.rows} px`,
      );
      await page.screenshot({ path: join(shots, 'presenter-1280-docker-down.png') });
      expect(bar.chrome).toBeLessThanOrEqual(720 * 0.2);
      expect(bar.clipped).toEqual([]);
      expect(bar.outside).toEqual([]);
      expect(bar.mode!.textWidth).toBeLessThanOrEqual(bar.mode!.room);
      expect(bar.error!.text).toMatch(/Error: .*Docker/);
      expect(bar.error!.text).toMatch(/Fix: /);
      expect(bar.error!.fontSize).toBeGreaterThanOrEqual(16);
      expect(bar.error!.inView).toBe(true);

      // The terminal says the same at projector size, broken between words, not inside them.
      await expect
        .poll(async () => (await terminalText(page)).lines.map((l) => l.text).join('\n'), { timeout: 15_000 })
        .toContain('(or Docker Desktop).');
      const term = await terminalText(page);
      const first = term.lines.findIndex((l) => l.text.startsWith('The iptables cluster cannot be checked:'));
      const last = term.lines.findIndex((l, i) => i >= first && l.text.endsWith('(or Docker Desktop).'));
      const notice = term.lines.slice(first, last + 1);
      console.log(`[presenter] 1280×720 notice, ${term.cols} columns:\n${notice.map((l) => `  ${l.text}`).join('\n')}`);
      expect(term.midWord).toEqual([]);
      expect(first).toBeGreaterThanOrEqual(0);
      expect(term.cols).toBeLessThan(60);
      expect(notice.length).toBeGreaterThan(5);
      for (const line of notice) expect(line.text.length).toBeLessThanOrEqual(term.cols);
      expect(notice.map((l) => l.text).join(' ')).toMatch(
        /^The iptables cluster cannot be checked: Docker is not running: .* install one: https:\/\/docs\.docker\.com\/engine\/install\/ \(or Docker Desktop\)\.$/,
      );
    } finally {
      stage.doubles.setState({ docker: 'up' });
    }
  });

  it('a page opened in the presenter view paints nothing of the normal page first', async () => {
    const page = await stage.browser.context.newPage();
    try {
      await page.setViewportSize({ width: 1920, height: 1080 });
      // When <html> turns presenter and when the first content is painted, in the page's own clock.
      await page.addInitScript(() => {
        const w = window as unknown as { seen: Record<string, number> };
        w.seen = {};
        new MutationObserver(() => {
          if (document.documentElement?.hasAttribute('data-present')) w.seen.present ??= performance.now();
        }).observe(document, { attributes: true, subtree: true, childList: true });
        new PerformanceObserver((l) => l.getEntries().forEach((e) => (w.seen[e.name] = e.startTime))).observe({
          type: 'paint',
          buffered: true,
        });
      });
      await openSignedIn(page, stage.course, `${LAB}?present`);
      await page.waitForSelector('html[data-present]');
      await expect
        .poll(() => page.evaluate(() => (window as unknown as { seen: Record<string, number> }).seen['first-contentful-paint']))
        .toBeDefined();
      const seen = await page.evaluate(() => (window as unknown as { seen: Record<string, number> }).seen);
      expect(seen.present).toBeGreaterThan(0);
      expect(seen['first-contentful-paint']).toBeGreaterThanOrEqual(seen.present);
      await page.screenshot({ path: join(shots, 'presenter-first-paint.png') });
    } finally {
      await page.close();
    }
  });

  it('the presenter view and the Follow mirror load only when used: a plain lab page fetches neither; Present, Shift+P and the Follow tab do', async () => {
    const { page } = stage.browser;
    await page.setViewportSize({ width: 1280, height: 800 });
    const fetched: string[] = [];
    const onRequest = (r: { url(): string }) => fetched.push(new URL(r.url()).pathname);
    page.on('request', onRequest);
    try {
      // Not in the presenter view (earlier tests left it on for this tab).
      await page.goto(`${stage.course.origin}/`);
      await page.evaluate(() => sessionStorage.removeItem('dplab.present'));
      await openSignedIn(page, stage.course, `${LAB}?follow`);
      await page.waitForSelector('dplab-terminal:not([node]) .xterm');
      await page.waitForTimeout(500);
      const presenterChunk = () => fetched.filter((p) => /\/_astro\/presenter\.[\w-]+\.js$/.test(p));
      const defined = (tag: string) => page.evaluate((t) => !!customElements.get(t), tag);
      expect(presenterChunk()).toEqual([]);
      expect(await defined('dplab-presenter')).toBe(false);
      expect(await defined('dplab-terminal-watch')).toBe(false);
      expect(await page.locator('html').getAttribute('data-present-asked')).toBeNull();

      // The Present button loads the view and opens it with that one click.
      await page.getByRole('button', { name: 'Present', exact: true }).click();
      await page.waitForSelector('html[data-present]');
      expect(presenterChunk()).toHaveLength(1);
      expect(await page.locator('dplab-presenter').isVisible()).toBe(true);
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      await page.keyboard.press('Escape');
      await page.waitForSelector('html:not([data-present])');

      // Shift+P, on a fresh page: the key that loads the view also opens it.
      await page.evaluate(() => sessionStorage.removeItem('dplab.present'));
      await openSignedIn(page, stage.course, `${LAB}?follow`);
      await page.waitForSelector('dplab-terminal:not([node]) .xterm');
      expect(await defined('dplab-presenter')).toBe(false);
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      await page.keyboard.press('Shift+P');
      await page.waitForSelector('html[data-present]');
      await page.keyboard.press('Shift+P');
      await page.waitForSelector('html:not([data-present])');

      // The Follow tab: its mirror's element is defined once the tab opens, and mirrors this runner's presenter.
      await page.getByRole('tab', { name: 'Follow the instructor' }).click();
      await expect.poll(() => defined('dplab-terminal-watch')).toBe(true);
      await page.getByRole('button', { name: "Follow this runner's presenter" }).click();
      await page.waitForSelector('.dplab-follow-view dplab-terminal-watch[data-state="watching"]', { timeout: 15_000 });
      await page.screenshot({ path: join(shots, 'follow-here.png') });
    } finally {
      page.off('request', onRequest);
    }
  });
});
