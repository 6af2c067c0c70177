/**
 * axe-core on every page of the built course, in the light and the dark theme, signed in (the
 * live panels render what a learner sees): no critical and no serious violation anywhere.
 * axe is injected with addScriptTag into a context that bypasses the pages' CSP for it alone.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distDir } from '../scripts/base/paths.ts';
import { runAxe } from './axe-run.ts';
import { hasChromium, chromiumNote, launchBrowser, openSignedIn, startCourse, type Browser, type Course } from './harness.ts';

/** Pages scanned at once per theme: the scans wait on the runner and on drawing as much as they compute. */
const AT_ONCE = 3;
/** The page is settled when no request (but a stream) has been in flight for this long. */
const QUIET_MS = 300;

/**
 * Resolves once `page` has had no request in flight for QUIET_MS: the live panels' questions to
 * the runner answered and drawn. The event stream and the terminal socket stay open by design,
 * so they do not count.
 */
function quiet(page: Page): { settled(): Promise<void>; stop(): void } {
  const open = new Set<object>();
  const streaming = (url: string) => url.includes('/events') || url.includes('/api/terminal');
  const onRequest = (r: { url(): string }) => !streaming(r.url()) && open.add(r);
  const onDone = (r: object) => open.delete(r);
  page.on('request', onRequest);
  page.on('requestfinished', onDone);
  page.on('requestfailed', onDone);
  return {
    async settled() {
      const deadline = Date.now() + 15_000;
      let quietSince = Date.now();
      while (Date.now() < deadline) {
        if (open.size > 0) quietSince = Date.now();
        else if (Date.now() - quietSince >= QUIET_MS) return;
        await page.waitForTimeout(50);
      }
    },
    stop() {
      page.off('request', onRequest);
      page.off('requestfinished', onDone);
      page.off('requestfailed', onDone);
    },
  };
}

function pages(dir = distDir): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...pages(path));
    else if (entry === 'index.html') out.push(`/${relative(distDir, dir).split(sep).join('/')}${dir === distDir ? '' : '/'}`);
  }
  return out.sort();
}

interface Found {
  page: string;
  theme: string;
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/** Opens `path` in `theme`, waits for what draws late, and returns axe's violations. */
async function scan(
  page: Page,
  origin: string,
  path: string,
  theme: string,
  prepare?: (page: Page) => Promise<void>,
): Promise<Omit<Found, 'page' | 'theme'>[]> {
  const requests = quiet(page);
  await page.goto(`${origin}${path}`, { waitUntil: 'load' });
  // The viewer link's page (/watch/) is no Starlight page: always dark, like the terminal it mirrors.
  if (path !== '/watch/') expect(await page.evaluate(() => document.documentElement.dataset.theme), path).toBe(theme);
  await requests.settled();
  requests.stop();
  // Mermaid has drawn; nothing says it is busy (a busy view is faded); expressive-code has made
  // every code block that scrolls focusable (it does so when the browser is idle: late, when busy).
  await page
    .waitForFunction(
      () =>
        !document.querySelector('[aria-busy="true"]') &&
        [...document.querySelectorAll('dplab-mermaid')].every((m) => m.hasAttribute('data-rendered') || m.hasAttribute('data-failed')) &&
        [...document.querySelectorAll('.expressive-code pre')].every((p) => p.scrollWidth <= p.clientWidth || p.hasAttribute('tabindex')),
      undefined,
      { timeout: 20_000 },
    )
    .catch(() => undefined);
  await prepare?.(page);
  return runAxe(page);
}

describe.skipIf(!hasChromium)(`accessibility with axe-core${chromiumNote}`, () => {
  let course: Course;
  let browser: Browser;

  beforeAll(async () => {
    course = await startCourse();
    browser = await launchBrowser({ bypassCSP: true });
    await openSignedIn(browser.page, course, '/');
    // No stored theme: every tab follows its own colour scheme (emulateMedia below).
    await browser.page.evaluate(() => localStorage.removeItem('starlight-theme'));
  });
  afterAll(async () => {
    await browser?.close();
    await course?.close();
  });

  for (const theme of ['light', 'dark'] as const) {
    it(`every page in the ${theme} theme: 0 critical, 0 serious`, { timeout: 240_000 }, async () => {
      const list = pages();
      expect(list.length).toBeGreaterThan(20);
      const found: Found[] = [];
      // Each scanner its own tab, whose colour scheme picks the theme (Starlight follows it when
      // no theme is stored), so the tabs sharing one storage cannot change each other's theme.
      const queue = [...list];
      await Promise.all(
        Array.from({ length: AT_ONCE }, async () => {
          const page = await browser.context.newPage();
          await page.emulateMedia({ colorScheme: theme });
          try {
            for (let path = queue.shift(); path; path = queue.shift()) {
              const violations = await scan(page, course.origin, path, theme);
              for (const v of violations) if (v.impact === 'critical' || v.impact === 'serious') found.push({ page: path, theme, ...v });
            }
          } finally {
            await page.close();
          }
        }),
      );
      found.sort((a, b) => a.page.localeCompare(b.page));
      const summary = found.map((f) => `${f.page} [${f.theme}] ${f.impact} ${f.id}: ${f.help} — ${f.targets.join(' | ')}`);
      expect(summary).toEqual([]);
    });
  }

  for (const theme of ['light', 'dark'] as const) {
    it(`a lab page and /terminal/ on a phone (390×844) in the ${theme} theme: 0 critical, 0 serious`, { timeout: 60_000 }, async () => {
      const { page } = browser;
      await page.setViewportSize({ width: 390, height: 844 });
      // From the course's origin (its storage), whatever page an earlier test left open.
      await page.emulateMedia({ colorScheme: theme });
      const found: string[] = [];
      for (const path of ['/labs/first-service/', '/terminal/']) {
        // The phone layout: the mode picker shows its short label.
        for (const v of await scan(page, course.origin, path, theme))
          if (v.impact === 'critical' || v.impact === 'serious')
            found.push(`${path} [${theme}] ${v.impact} ${v.id}: ${v.help} — ${v.targets.join(' | ')}`);
        expect(await page.evaluate(() => document.querySelector('.dplab-ws-switch')?.checkVisibility()), path).toBe(true);
      }
      expect(found).toEqual([]);
      await page.setViewportSize({ width: 1400, height: 900 });
    });
  }

  it('the presenter view of a lab at 1280×720 with its More menu open: 0 critical, 0 serious', { timeout: 60_000 }, async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      const found = (
        await scan(page, course.origin, '/labs/first-service/?present', 'dark', async (p) => {
          await p.waitForSelector('html[data-present]');
          await p.locator('.dplab-present-more > summary').click();
          expect(await p.getByRole('button', { name: 'Bring cluster to this step' }).isVisible()).toBe(true);
        })
      )
        .filter((v) => v.impact === 'critical' || v.impact === 'serious')
        .map((v) => `presenter ${v.impact} ${v.id}: ${v.help} — ${v.targets.join(' | ')}`);
      expect(found).toEqual([]);
    } finally {
      // The presenter view is kept for the tab's session: leave it for whatever runs next.
      await page.evaluate(() => sessionStorage.removeItem('dplab.present'));
      await page.setViewportSize({ width: 1400, height: 900 });
    }
  });
});
