/**
 * The first `npm start` as the learner sees it in the browser: the link opens the build page,
 * which follows the build (its script runs under the page's CSP) and turns into the course,
 * keeping the link's #token, when the build is done.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, chromiumNote, launchBrowser, type Browser } from './harness.ts';
import { startServer, type RunningServer } from '../scripts/server/http.ts';
import { BuildProgress } from '../scripts/base/site-build.ts';

describe.skipIf(!hasChromium)(`the page while the course builds${chromiumNote}`, { timeout: 60_000 }, () => {
  const progress = new BuildProgress();
  let server: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    const site = mkdtempSync(join(tmpdir(), 'dplab-site-'));
    writeFileSync(join(site, 'index.html'), '<!doctype html><title>Course</title><h1>The course itself</h1>');
    server = await startServer({ port: 0, portExplicit: true, siteDir: site, building: progress });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the build as it goes, then the course, with the token still in the link', async () => {
    const { page } = browser;
    const problems: string[] = [];
    // The build page itself is a 503 (and there is no favicon yet): Chromium logs those; a
    // refused script or any other error is a problem.
    page.on(
      'console',
      (m) => void (m.type() === 'error' && !/^Failed to load resource: .* (503|404)/.test(m.text()) && problems.push(m.text())),
    );
    page.on('pageerror', (e) => void problems.push(e.message));
    await page.goto(server.url);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Building the course…');
    progress.onOutput('12:00:00 [build] Building static entrypoints...\n');
    await expect.poll(() => page.locator('#step').textContent(), { timeout: 10_000 }).toMatch(/^Compiling the pages \(\d+ s\)$/);
    progress.onOutput(' generating static routes \n12:00:01   ├─ /index.html (+5ms)\n');
    await expect
      .poll(() => page.locator('#step').textContent(), { timeout: 10_000 })
      .toMatch(/Writing the pages \(\d+ s, 1 pages written\)/);
    progress.done();
    await expect.poll(() => page.locator('h1').textContent(), { timeout: 10_000 }).toBe('The course itself');
    expect(new URL(page.url()).hash).toMatch(/^#token=/);
    expect(problems).toEqual([]);
  });
});
