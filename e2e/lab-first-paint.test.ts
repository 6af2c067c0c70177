/**
 * A lab page at desktop width paints no Starlight sidebar and no page title, not even first:
 * the workspace is the page. The rules that remove them must hold before the workspace is
 * parsed, since a browser paints a page that is still arriving (on a busy machine it painted the
 * sidebar before the workspace came). Proved two ways: the page cut off just before its
 * workspace, as a browser holds it mid-parse, shows neither; and a whole page, watched frame by
 * frame from its first, never shows the sidebar.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { hasChromium, chromiumNote, openSignedIn } from './harness.ts';
import { courseAndBrowser } from './course-and-browser.ts';
import { SCREENSHOT_DIR } from './workspace-view.ts';

const LAB = '/labs/first-service/';

/** What a person sees of the page's chrome now: the sidebar and the Starlight title, each drawn or not. */
function chrome(page: Page) {
  return page.evaluate(() => {
    const drawn = (sel: string) => {
      const e = document.querySelector(sel);
      if (!e) return null;
      const r = e.getBoundingClientRect();
      const s = getComputedStyle(e);
      return s.display !== 'none' && s.visibility !== 'hidden' && r.width > 1 && r.height > 1;
    };
    return { sidebar: drawn('.sidebar-pane'), title: drawn('h1#_top'), workspace: document.querySelector('.dplab-ws') !== null };
  });
}

describe.skipIf(!hasChromium)(`a lab page's first paint is the workspace${chromiumNote}`, { timeout: 90_000 }, () => {
  const stage = courseAndBrowser();

  it('the page as parsed up to its workspace shows no sidebar and no title', async () => {
    const { page } = stage.browser;
    const html = await (await fetch(`${stage.course.origin}${LAB}`)).text();
    const cut = html.search(/<dplab-lab\b[^>]*class="[^"]*\bdplab-ws\b/);
    expect(cut, 'the lab page has its workspace').toBeGreaterThan(0);
    const head = html.slice(0, cut);
    expect(head).toContain('sidebar-pane');
    // The browser gets only what came before the workspace, as when it paints mid-parse.
    await page.route(`${stage.course.origin}${LAB}`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: head }));
    try {
      await page.goto(`${stage.course.origin}${LAB}`, { waitUntil: 'load' });
      const seen = await chrome(page);
      await page.screenshot({ path: join(SCREENSHOT_DIR, 'lab-before-workspace-parsed.png') });
      expect(seen).toEqual({ sidebar: false, title: false, workspace: false });
    } finally {
      await page.unroute(`${stage.course.origin}${LAB}`);
    }
  });

  it('a whole lab page, watched from its first frame, never draws the sidebar', async () => {
    const page = await stage.browser.context.newPage();
    try {
      await page.setViewportSize({ width: 1280, height: 800 });
      // Before every frame from the first: is the sidebar drawn, and is the workspace there yet?
      await page.addInitScript(() => {
        const w = window as unknown as { frames: { sidebar: boolean; workspace: boolean }[] };
        w.frames = [];
        const look = () => {
          const pane = document.querySelector('.sidebar-pane');
          const r = pane?.getBoundingClientRect();
          const s = pane && getComputedStyle(pane);
          const sidebar = !!s && s.display !== 'none' && s.visibility !== 'hidden' && !!r && r.width > 1;
          w.frames.push({ sidebar, workspace: !!document.querySelector('.dplab-ws') });
          if (w.frames.length < 120) requestAnimationFrame(look);
        };
        requestAnimationFrame(look);
      });
      await openSignedIn(page, stage.course, LAB);
      await page.waitForSelector('.dplab-ws');
      await expect.poll(() => page.evaluate(() => (window as unknown as { frames: unknown[] }).frames.length)).toBeGreaterThan(5);
      const frames = await page.evaluate(() => (window as unknown as { frames: { sidebar: boolean; workspace: boolean }[] }).frames);
      expect(frames.filter((f) => f.sidebar)).toEqual([]);
      expect(await chrome(page)).toEqual({ sidebar: false, title: false, workspace: true });
    } finally {
      await page.close();
    }
  });

  it('on a phone the sidebar stays the menu: closed, and there when opened', async () => {
    const page = await stage.browser.context.newPage();
    try {
      await page.setViewportSize({ width: 390, height: 844 });
      await openSignedIn(page, stage.course, LAB);
      await page.waitForSelector('.dplab-ws');
      expect((await chrome(page)).sidebar).toBe(false);
      await page.getByRole('button', { name: 'Menu' }).click();
      await expect.poll(async () => (await chrome(page)).sidebar).toBe(true);
    } finally {
      await page.close();
    }
  });
});
