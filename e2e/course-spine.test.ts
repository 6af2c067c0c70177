/**
 * The course's spine in the browser: Next from the first lesson runs lesson → its labs → next
 * lesson to the end, every page on the way loads; a lab page links back to its lesson and on,
 * and sums up when every step has passed; /lessons/ and /labs/ show where the learner stands;
 * the Follow tab only where there is an instructor; the phone's lab page has the menu and the
 * theme switch. Against the first-service test doubles, as e2e/lab.test.ts.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { courseOrder } from '../scripts/catalogue/course-order.ts';
import { firstServiceScenario } from '../test/fixtures/first-service-scenario.ts';
import { DOCKER_INFO } from '../test/fixtures/cluster-scenarios.ts';
import { chromiumNote, hasChromium, openSignedIn, stageWithDoubles, type Stage } from './harness.ts';

const shots = join('test-results', 'screenshots');
const step = (id: string) => `dplab-lab .dplab-step[data-step="${id}"]`;

/** What the page shows as the course item's standing on an index page. */
const standing = (page: Page, attr: string, id: string) => page.locator(`[${attr}="${id}"]`).first().getAttribute('data-standing');

async function passStep(page: Page, id: string): Promise<void> {
  await page.locator(`${step(id)} [data-action="check"]`).click();
  await page
    .locator(`${step(id)} .dplab-result[data-status="pass"]`)
    .waitFor({ timeout: 30_000 })
    .catch(async (err) => {
      // Say what Check said instead.
      throw new Error(`${id} did not pass: ${await page.locator(`${step(id)} .dplab-result`).textContent()}`, { cause: err });
    });
}

describe.skipIf(!hasChromium)(`the course's spine in the browser${chromiumNote}`, { timeout: 120_000 }, () => {
  let stage: Stage;

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    // A machine with Docker running (`docker info` answers): the checks reach the cluster.
    const docker = { tool: 'docker' as const, match: '^info ', stdout: DOCKER_INFO };
    stage = await stageWithDoubles({ rules: [...firstServiceScenario('iptables').rules, docker] }, { clusterOf: 'iptables' });
  });
  afterAll(async () => {
    await stage?.close();
  });

  it('Next from the first lesson runs lesson → its labs → next lesson to the end, and every page loads', async () => {
    const { page } = stage.browser;
    const order = courseOrder();
    const lessonLabs = new Map(order.flatMap((e) => (e.kind === 'lesson' ? [[e.href, e.labs] as const] : [])));
    await openSignedIn(page, stage.course, '/');
    const visited: string[] = [];
    let lesson = '';
    for (;;) {
      const path = new URL(page.url()).pathname;
      visited.push(path);
      expect(await page.locator('h1').first().textContent(), `${path} has its title`).toBeTruthy();
      // Previous goes back the same way (a lab page draws its own links, tested below).
      if (visited.length > 1 && !path.startsWith('/labs/'))
        expect(await page.locator('a[rel="prev"]').getAttribute('href'), `Previous on ${path}`).toBe(visited.at(-2));
      if (path === '/') {
        // The home page's route names each lesson's labs by title, with a link.
        expect(await page.locator('.dplab-route a[href="/labs/first-service/"]').textContent()).toBe('Your first Service');
      }
      if (path.startsWith('/lessons/')) lesson = path;
      else if (path.startsWith('/labs/')) {
        const lab = path.split('/')[2];
        expect(lessonLabs.get(lesson), `${path} comes after a lesson that sends the learner to it (came after ${lesson})`).toContain(lab);
      }
      const next = page.locator('a[rel="next"]');
      if ((await next.count()) === 0) break;
      expect(visited.length, 'Next never comes back to a page').toBeLessThan(order.length + 2);
      const href = await next.first().getAttribute('href');
      const response = await Promise.all([page.waitForURL((u) => u.pathname === href), next.first().click()]).then(() =>
        page.evaluate(() => (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined)?.responseStatus),
      );
      expect(response, `${href} loads`).toBe(200);
    }
    expect(visited).toEqual(['/', ...order.map((e) => e.href)]);
    // Every lesson and every lab of the course is on the path, each once.
    expect(visited.filter((p) => p.startsWith('/lessons/'))).toHaveLength(lessonLabs.size);
    expect(new Set(visited).size).toBe(visited.length);
  });

  it('a lab page links back to its lesson and on to the next lab, in view and not covered', async () => {
    const { page } = stage.browser;
    await page.setViewportSize({ width: 1280, height: 800 });
    await openSignedIn(page, stage.course, '/labs/first-service/');
    const back = page.locator('.dplab-lab-course a[rel="up"]');
    expect(await back.getAttribute('href')).toBe('/lessons/services/');
    const onward = page.locator('.dplab-lab-course a', { hasText: 'Next lab' });
    expect(await onward.getAttribute('href')).toBe('/labs/proxy-mode-rules/');
    for (const link of [back, onward]) {
      const hit = await link.evaluate((a) => {
        const r = a.getBoundingClientRect();
        return a.contains(document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2));
      });
      expect(hit, `${await link.textContent()} is the topmost thing where it is drawn`).toBe(true);
    }
    // The end of the instructions: back, and Next to the following page of the course.
    expect(await page.locator('.dplab-lab-end a[rel="next"]').getAttribute('href')).toBe('/labs/proxy-mode-rules/');
    // Concepts read as what they are, each linked to the lesson that teaches it; no bare codes.
    await page.locator('.dplab-lab-concepts summary').click();
    const concept = page.locator('.dplab-lab-concepts li').first();
    expect(await concept.textContent()).toContain('EndpointSlices');
    expect(await concept.locator('a').getAttribute('href')).toBe('/lessons/services/');
    expect(await page.locator('.dplab-lab-head').textContent()).not.toMatch(/\bS[23]\b/);
  });

  it('the index pages show a lab partly done after one passed step, and a visited lesson as begun', async () => {
    const { page } = stage.browser;
    await openSignedIn(page, stage.course, '/labs/');
    // Earlier tests walked the course, which reads every lesson: start this browser's record afresh.
    await page.evaluate(() =>
      Object.keys(localStorage)
        .filter((k) => k.startsWith('dplab:read:'))
        .forEach((k) => localStorage.removeItem(k)),
    );
    await page.reload();
    await expect.poll(() => standing(page, 'data-lab-standing', 'first-service')).toBe('not-started');
    await openSignedIn(page, stage.course, '/labs/first-service/');
    stage.doubles.setState({ s1: '1' });
    await passStep(page, 'deploy-web');
    await page.goto(`${stage.course.origin}/labs/`);
    await expect.poll(() => standing(page, 'data-lab-standing', 'first-service')).toBe('partly');
    expect(await page.locator('[data-lab-standing="first-service"]').textContent()).toContain('1 of 4 steps');
    expect(await standing(page, 'data-lab-standing', 'headless')).toBe('not-started');
    // The runner's record counts too: a fresh storage still shows the passed step.
    await page.evaluate(() => localStorage.removeItem('dplab:lab:first-service'));
    await page.reload();
    await expect.poll(() => standing(page, 'data-lab-standing', 'first-service')).toBe('partly');

    await page.goto(`${stage.course.origin}/lessons/`);
    await expect.poll(() => standing(page, 'data-lesson-standing', 'services')).toBe('partly');
    expect(await standing(page, 'data-lesson-standing', 'ipvs')).toBe('not-started');
    await page.goto(`${stage.course.origin}/lessons/ipvs/`);
    await page.goto(`${stage.course.origin}/lessons/`);
    await expect.poll(() => standing(page, 'data-lesson-standing', 'ipvs')).toBe('partly');
    expect(await page.locator('[data-lesson-standing="ipvs"]').textContent()).toContain('Read');
    // Labs are named by title, with a link.
    expect(await page.locator('.dplab-ci-labs a[href="/labs/first-service/"]').first().textContent()).toContain('Your first Service');
  });

  it('when every step has passed, the lab ends with what the learner did and what the checks saw', async () => {
    const { page } = stage.browser;
    await openSignedIn(page, stage.course, '/labs/first-service/');
    const summary = page.locator('.dplab-lab-summary');
    expect(await summary.isHidden()).toBe(true);
    stage.doubles.setState({ s1: '1', s2: '1', s3: '1', s4: '1' });
    for (const id of ['deploy-web', 'expose-web', 'reach-web', 'proxy-mode']) {
      if ((await page.locator(step(id)).getAttribute('data-status')) !== 'pass') await passStep(page, id);
    }
    await summary.waitFor({ state: 'visible' });
    const items = await summary.locator('li').allTextContents();
    expect(items).toHaveLength(4);
    expect(items[0]).toContain('Run three web pods');
    // The check's own words, not a placeholder.
    expect(items.some((t) => /ready|endpoint|pods?/i.test(t.split(':').slice(1).join(':')))).toBe(true);
    await page.locator('.dplab-lab-end').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, 'spine-lab-summary-1280-light.png') });
    stage.doubles.setState({ s1: '0', s2: '0', s3: '0', s4: '0' });
  });

  it('Reset lab asks first, by keyboard too; Keep my work changes nothing', async () => {
    const { page } = stage.browser;
    await openSignedIn(page, stage.course, '/labs/first-service/');
    // What only a Reset does: unmark the lab's namespace and empty it.
    const namespaceCalls = () =>
      stage.doubles.commandLines().filter((c) => /dplab\.io\/setup-|-n lab-first-service --ignore-not-found/.test(c)).length;
    const beforeDialog = namespaceCalls();
    await page.locator('[data-action="reset-lab"]').focus();
    await page.keyboard.press('Enter');
    const dialog = page.locator('dialog.dplab-reset-dialog');
    await dialog.waitFor({ state: 'visible' });
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Keep my work');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(namespaceCalls()).toBe(beforeDialog);
    await page.locator('[data-action="reset-lab"]').click();
    await page.getByRole('button', { name: 'Reset the lab' }).click();
    const notice = page.locator('.dplab-runner-notice');
    await expect.poll(() => notice.textContent(), { timeout: 30_000 }).toContain('The lab is reset');
    expect(await notice.isVisible()).toBe(true);
    expect(namespaceCalls()).toBeGreaterThan(beforeDialog);
  });

  it('the Follow tab is there on a workshop seat page or with ?follow, not for a learner alone', async () => {
    const { page } = stage.browser;
    const follow = page.getByRole('tab', { name: 'Follow the instructor' });
    const answered = page.waitForResponse((r) => r.url().endsWith('/api/terminal/broadcast'));
    await openSignedIn(page, stage.course, '/labs/first-service/');
    // The runner said whom it broadcasts to (nobody): nothing to follow here.
    await answered;
    expect(await follow.isVisible()).toBe(false);
    await openSignedIn(page, stage.course, '/labs/first-service/?follow');
    await follow.waitFor({ state: 'visible' });
    const seat = await stage.browser.context.newPage();
    try {
      // As the portal's learner script does (scripts/portal/pages/learner.js), before the page's modules run.
      await seat.addInitScript(() =>
        document.addEventListener('readystatechange', () => document.documentElement.setAttribute('data-dplab-seat', ''), { once: true }),
      );
      await seat.goto(`${stage.course.origin}/labs/first-service/`);
      await seat.getByRole('tab', { name: 'Follow the instructor' }).waitFor({ state: 'visible' });
    } finally {
      await seat.close();
    }
  });

  it("the phone's lab page has the menu, with the course and the theme switch", async () => {
    const { page } = stage.browser;
    await page.setViewportSize({ width: 390, height: 844 });
    await openSignedIn(page, stage.course, '/labs/first-service/');
    const menu = page.getByRole('button', { name: 'Menu' });
    await menu.click();
    const theme = page.locator('starlight-theme-select select').last();
    await theme.waitFor({ state: 'visible' });
    expect(await page.locator('#starlight__sidebar a[href="/lessons/services/"]').isVisible()).toBe(true);
    await theme.selectOption('dark');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await page.screenshot({ path: join(shots, 'spine-lab-menu-390-dark.png') });
    await menu.click();
    expect(await page.locator('dplab-lab .dplab-ws-title').isVisible()).toBe(true);
    await page.evaluate(() => localStorage.removeItem('starlight-theme'));
  });

  it('search finds a lab step by its words, with no page state (busy badges, step marks) or button labels in the excerpt', async () => {
    const { page } = stage.browser;
    await page.setViewportSize({ width: 1280, height: 800 });
    await openSignedIn(page, stage.course, '/labs/');
    await page.locator('button[data-open-modal]').first().click();
    const search = page.locator('dialog[open] input.pagefind-ui__search-input, dialog[open] input[type="search"]').first();
    await search.waitFor({ timeout: 20_000 });
    await search.fill('Expose web as a ClusterIP Service');
    const excerpts = page.locator('.pagefind-ui__result-excerpt');
    await excerpts.first().waitFor({ timeout: 30_000 });
    const text = (await excerpts.allTextContents()).join('\n');
    expect(text).not.toMatch(/Checking…|not done|[○✓✗]|Not running|Lab setup/);
    // Nor the controls' labels around the step's words.
    expect(text).not.toMatch(/Show a hint|Show solution|Apply solution|Reset to this step|\bCopy\b|Type puts it/);
    await page.keyboard.press('Escape');
  });

  it('screenshots: the index pages and a lab page, 1280×800 and 390×844, light and dark', async () => {
    const { page } = stage.browser;
    await openSignedIn(page, stage.course, '/labs/');
    for (const [w, h] of [
      [1280, 800],
      [390, 844],
    ]) {
      await page.setViewportSize({ width: w, height: h });
      for (const theme of ['light', 'dark']) {
        await page.evaluate((t) => localStorage.setItem('starlight-theme', t), theme);
        for (const [name, path] of [
          ['lessons', '/lessons/'],
          ['labs', '/labs/'],
          ['lab', '/labs/first-service/'],
        ]) {
          await page.goto(`${stage.course.origin}${path}`);
          await page.waitForSelector(`html[data-theme="${theme}"]`);
          // The progress is filled in, or the workspace is drawn.
          await page.waitForSelector(path === '/labs/first-service/' ? 'dplab-terminal[data-state]' : '[data-standing]', {
            state: 'attached',
          });
          await page.screenshot({ path: join(shots, `spine-${name}-${w}-${theme}.png`) });
        }
      }
    }
    await page.evaluate(() => localStorage.removeItem('starlight-theme'));
  });
});
