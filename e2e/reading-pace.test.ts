/**
 * A learner reads a page for longer than any of the server's timeouts, then clicks. Chromium
 * opens sockets ahead of the next click and leaves them idle; the server times them out while
 * the learner reads. Whatever the server writes on such a socket, Chromium shows as the next
 * page: with a 400 there, 5 of 6 clicks after 20 s of reading ended on an error page.
 *
 * The runner's real limits are 10 s for headers and 5 s idle between requests; this runner has
 * them at 1 s and 0.8 s (the whole request within 1.2 s), so "reading for longer than every timeout"
 * takes two seconds a click, not minutes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, chromiumNote, launchBrowser, openSignedIn, startCourse, type Browser, type Course } from './harness.ts';
import { LESSONS_PREFIX, readDocPages } from '../scripts/catalogue/lessons.ts';

/** Seven lesson pages: the first is opened, the sidebar's links lead to the other six. */
const HREFS = readDocPages()
  .filter((p) => p.file.startsWith(LESSONS_PREFIX))
  .slice(0, 7)
  .map((p) => `/${p.file.replace(/\.mdx$/, '')}/`);

const LIMITS = { headersMs: 1_000, requestMs: 1_200, keepAliveMs: 800, checkEveryMs: 200 };
/** Longer than every limit above, and than Node's check interval after it. */
const READ_MS = LIMITS.requestMs + 4 * LIMITS.checkEveryMs;

describe.skipIf(!hasChromium)(`reading at a person's pace${chromiumNote}`, () => {
  let course: Course;
  let browser: Browser;
  beforeAll(async () => {
    course = await startCourse(undefined, { limits: LIMITS });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await course?.close();
  });

  it('every click on a lesson link after reading longer than every server timeout loads the page', async () => {
    const { page } = browser;
    const [first, ...next] = HREFS;
    await openSignedIn(page, course, first!);
    const seen: string[] = [];
    for (const href of next) {
      // Reading: nothing happens for longer than the header, request and keep-alive timeouts.
      await page.waitForTimeout(READ_MS);
      const [response] = await Promise.all([
        page.waitForNavigation({ waitUntil: 'domcontentloaded' }),
        page.click(`nav a[href="${href}"]`),
      ]);
      seen.push(`${href} ${response?.status() ?? 'no response'} ${page.url().startsWith('chrome-error:') ? 'error page' : ''}`.trim());
    }
    expect(next).toHaveLength(6);
    expect(seen).toEqual(next.map((href) => `${href} 200`));
  }, 180_000);
});
