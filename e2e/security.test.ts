/**
 * Browser tier of the runner's security contract (issue 10), in Chromium:
 * - the token reaches nothing but the runner: a second local server on another 127.0.0.1
 *   port, visited after sign-in, receives no cookie, no Authorization and no Referer;
 * - a page on another port that frames /terminal/ gets nothing, and no shell starts;
 * - the pages whose scripts do the most run under their CSP without a violation, and the watch
 *   sees an injected one (every page: the visibility audit, e2e/visibility.test.ts);
 * - one terminal over the runner's cap says so in the page.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fetchStatusInPage,
  hasChromium,
  chromiumNote,
  launchBrowser,
  openSignedIn,
  startCourse,
  type Browser,
  type Course,
} from './harness.ts';

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
}

/** Another local web app: records every request and answers with `page` for `/frame`. */
async function otherServer(page: (path: string) => string): Promise<{ server: Server; origin: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page(req.url ?? '/'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  return { server, origin: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`, seen };
}

describe.skipIf(!hasChromium)(`runner security in the browser${chromiumNote}`, () => {
  let course: Course;
  let browser: Browser;
  let other: Awaited<ReturnType<typeof otherServer>>;

  beforeAll(async () => {
    course = await startCourse();
    browser = await launchBrowser();
    other = await otherServer((path) =>
      path.startsWith('/frame')
        ? `<!doctype html><title>framer</title><iframe id="f" src="${course.origin}/terminal/" width="800" height="500"></iframe>`
        : `<!doctype html><title>other app</title><img src="/pixel.png"><p>another local app</p>`,
    );
  });
  afterAll(async () => {
    await browser?.close();
    await course?.close();
    await new Promise((r) => other?.server.close(r));
  });

  it('after sign-in, another local server receives no token: no cookie, no Authorization, no Referer', async () => {
    const { page, context } = browser;
    await openSignedIn(page, course, '/terminal/');
    await page.waitForSelector('dplab-terminal[data-state="open"]', { timeout: 20_000 });
    expect(page.url()).not.toContain(course.token);
    expect(await fetchStatusInPage(page, '/api/session')).toBe(200);
    expect(await context.cookies()).toEqual([]);
    // The learner follows a link from a course page to another local app, then opens it directly.
    await page.evaluate((href) => {
      const a = document.createElement('a');
      a.href = href;
      a.textContent = 'other';
      document.body.append(a);
      a.click();
    }, `${other.origin}/from-link`);
    await page.waitForURL(`${other.origin}/from-link`);
    await page.goto(`${other.origin}/typed`);
    await page.waitForLoadState('load');
    expect(other.seen.map((s) => s.url)).toEqual(expect.arrayContaining(['/from-link', '/typed', '/pixel.png']));
    expect(other.seen.find((s) => s.url === '/from-link')?.headers.referer).toBeUndefined();
    for (const s of other.seen) {
      expect(s.headers.cookie, s.url).toBeUndefined();
      expect(s.headers.authorization, s.url).toBeUndefined();
      // The other app's own pages may refer to each other; nothing refers to the runner.
      expect(s.headers.referer ?? '', s.url).not.toContain(course.origin);
      expect(JSON.stringify(s)).not.toContain(course.token);
    }
  });

  it('an old ?token= link still signs in, through the fragment and without a cookie', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${course.origin}/explorer/?token=${course.token}`);
    expect(new URL(page.url()).pathname).toBe('/explorer/');
    expect(page.url()).not.toContain(course.token);
    expect(await fetchStatusInPage(page, '/api/session')).toBe(200);
    expect(await browser.context.cookies()).toEqual([]);
    await page.close();
  });

  it('a link opened over the page itself (only the fragment changes) still signs in', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${course.origin}/terminal/`);
    await page.evaluate(() => localStorage.clear());
    await page.reload();
    await page.waitForSelector('dplab-terminal[data-state="unavailable"]', { timeout: 20_000 });
    await page.evaluate((t) => (location.hash = `token=${t}`), course.token);
    await page.waitForSelector('dplab-terminal[data-state="open"]', { timeout: 20_000 });
    expect(page.url()).toBe(`${course.origin}/terminal/`);
    await page.close();
  });

  it('a page on another port that frames /terminal/ gets nothing, and no shell starts', async () => {
    const page = await browser.context.newPage();
    const console: string[] = [];
    page.on('console', (m) => console.push(m.text()));
    await new Promise((r) => setTimeout(r, 2000));
    const before = course.server.runner.openTerminals;
    await page.goto(`${other.origin}/frame`);
    await page.waitForTimeout(2000);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    const inside = frame ? await frame.evaluate(() => document.querySelectorAll('dplab-terminal').length).catch(() => 0) : 0;
    expect(inside).toBe(0);
    expect(frame?.url() ?? '').not.toMatch(/\/terminal\/$/);
    expect(course.server.runner.openTerminals).toBe(before);
    // Chromium says why: the runner's policy forbids being framed.
    expect(console.join('\n')).toMatch(/frame-ancestors/);
    await page.screenshot({ path: join(tmpdir(), 'dplab-e2e-framed.png') }).catch(() => undefined);
    await page.close();
  });

  // Every page's headers and its run under the CSP are watched by the visibility audit, which loads
  // each page at two sizes in two themes (e2e/visibility.test.ts, in `npm run test:audit`); this
  // test proves that watch on the pages whose scripts do the most, and that it sees a violation.
  it('the pages whose scripts do the most run under the CSP with no violation, and the watch sees one', async () => {
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`${page.url()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`${page.url()}: ${e.message}`));
    // CSP violations also arrive as events in the page, whatever the console shows.
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) =>
        console.error(`Refused to load (CSP ${e.violatedDirective}): ${e.blockedURI}`),
      );
    });
    // The pieces that run scripts still work under the policy: a diagram, the terminal, search.
    await page.goto(`${course.origin}/lessons/services/`);
    await page.waitForSelector('dplab-mermaid[data-rendered] svg', { timeout: 20_000 });
    await page.goto(`${course.origin}/terminal/`);
    await page.waitForSelector('dplab-terminal[data-state="open"]', { timeout: 20_000 });
    await page.goto(`${course.origin}/`);
    await page.locator('button[data-open-modal]').first().click();
    const search = page.locator('dialog[open] input[type="search"], dialog[open] input.pagefind-ui__search-input').first();
    await search.waitFor({ timeout: 20_000 });
    await search.fill('iptables');
    await page.waitForSelector('.pagefind-ui__result', { timeout: 30_000 });
    expect(problems).toEqual([]);
    // The watch above does see a violation when there is one: an injected inline script.
    await page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.injected = 1';
      document.body.append(s);
    });
    await expect.poll(() => problems.length).toBeGreaterThan(0);
    expect(await page.evaluate(() => (window as unknown as { injected?: number }).injected)).toBeUndefined();
    await page.close();
  });

  it('one terminal over the cap says so in the page', async () => {
    const capped = await startCourse(undefined, { maxTerminals: 1 });
    const first = await browser.context.newPage();
    const second = await browser.context.newPage();
    try {
      await openSignedIn(first, capped, '/terminal/');
      await first.waitForSelector('dplab-terminal[data-state="open"]', { timeout: 20_000 });
      await second.goto(`${capped.origin}/terminal/`);
      await second.waitForSelector('dplab-terminal[data-state="unavailable"]', { timeout: 20_000 });
      await expect.poll(() => second.locator('dplab-terminal .dplab-terminal-status').textContent()).toContain('the limit is 1');
      await second.screenshot({ path: join(tmpdir(), 'dplab-e2e-cap.png') });
      expect(capped.server.runner.openTerminals).toBe(1);
    } finally {
      await first.close();
      await second.close();
      await capped.close();
    }
  });
});
