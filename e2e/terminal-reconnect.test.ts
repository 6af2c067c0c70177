/**
 * A runner that goes away under an open terminal (a workshop portal restarted after a crash starts
 * each seat's runner again; a laptop wakes) is reconnected by the page itself: the terminal says it
 * is reconnecting, tries again after 1 s, 2 s, 4 s …, and opens a new shell once the runner is back,
 * with nobody pressing a key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../scripts/server/http.ts';
import { distDir } from '../scripts/base/paths.ts';
import { hasChromium, chromiumNote, launchBrowser, openSignedIn, startCourse, type Browser, type Course } from './harness.ts';

describe.skipIf(!hasChromium)(`a terminal whose runner restarts${chromiumNote}`, { timeout: 60_000 }, () => {
  let course: Course;
  let browser: Browser;
  let again: Awaited<ReturnType<typeof startServer>> | undefined;

  beforeAll(async () => {
    course = await startCourse();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await again?.close();
    await course?.close().catch(() => undefined);
  });

  it('comes back by itself once the runner answers again on its port', async () => {
    const { page } = browser;
    await openSignedIn(page, course, '/terminal/');
    const term = page.locator('dplab-terminal');
    await page.waitForSelector('dplab-terminal[data-state="open"]', { timeout: 20_000 });
    const port = course.server.port;
    await course.close();
    await expect.poll(() => term.getAttribute('data-state'), { timeout: 10_000 }).toBe('closed');
    expect(await term.locator('.xterm-rows').innerText()).toContain('reconnecting by itself');
    // Down for longer than the first two attempts (1 s, 2 s), as a portal restarting its seats is.
    await page.waitForTimeout(3_500);
    again = await startServer({ port, portExplicit: true, token: course.token, siteDir: distDir });
    // No key pressed: the next attempt (4 s after the second) finds it.
    await page.waitForSelector('dplab-terminal[data-state="open"]', { timeout: 20_000 });
    await term.locator('.xterm').click();
    await page.keyboard.type('echo back-$((40+2))');
    await page.keyboard.press('Enter');
    await expect.poll(() => term.locator('.xterm-rows').innerText(), { timeout: 15_000 }).toContain('back-42');
  });
});
