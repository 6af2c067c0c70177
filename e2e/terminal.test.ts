/**
 * Browser tier for the foundation: Chromium opens the course through the printed link, a
 * lesson's diagram is drawn, and a real shell answers in the page's terminal.
 */
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

describe.skipIf(!hasChromium)(`course in the browser${chromiumNote}`, () => {
  let course: Course;
  let browser: Browser;

  beforeAll(async () => {
    course = await startCourse();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await course?.close();
  });

  it('the token link signs in and leaves a clean URL', async () => {
    const { page } = browser;
    await openSignedIn(page, course, '/');
    expect(new URL(page.url()).search).toBe('');
    expect(new URL(page.url()).hash).toBe('');
    expect(await fetchStatusInPage(page, '/api/session')).toBe(200);
    // Nothing the browser sends by itself carries the token.
    expect(await page.evaluate(async () => (await fetch('/api/session')).status)).toBe(401);
  });

  it('a lesson shows its diagram drawn ahead of time, and loads no mermaid', async () => {
    const { page } = browser;
    const mermaidRequests: string[] = [];
    page.on('request', (r) => {
      if (/mermaid/i.test(r.url())) mermaidRequests.push(r.url());
    });
    await page.goto(`${course.origin}/lessons/services/`);
    await page.waitForSelector('dplab-mermaid[data-rendered] svg', { timeout: 20_000 });
    const svgText = await page.locator('dplab-mermaid svg').first().textContent();
    expect(svgText?.length ?? 0).toBeGreaterThan(10);
    expect(mermaidRequests).toEqual([]);
  });

  it('pages without a diagram do not load mermaid', async () => {
    const { page } = browser;
    const mermaidRequests: string[] = [];
    page.on('request', (r) => {
      if (/mermaid/i.test(r.url())) mermaidRequests.push(r.url());
    });
    await page.goto(`${course.origin}/terminal/`);
    await page.waitForSelector('dplab-terminal[data-state="open"]', { timeout: 20_000 });
    expect(mermaidRequests).toEqual([]);
  });

  it('types into the terminal and reads the shell output from the page', async () => {
    const { page } = browser;
    await page.goto(`${course.origin}/terminal/`);
    await page.waitForSelector('dplab-terminal[data-state="open"]', { timeout: 20_000 });
    await page.locator('dplab-terminal .xterm').click();
    await page.keyboard.type('echo BROWSER-$((20+22))-OK');
    await page.keyboard.press('Enter');
    await expect.poll(async () => page.locator('dplab-terminal .xterm-rows').textContent(), { timeout: 10_000 }).toContain('BROWSER-42-OK');
  });

  it('snippet events type into the active terminal', async () => {
    const { page } = browser;
    await page.evaluate(() =>
      document.dispatchEvent(new CustomEvent('dplab:type', { detail: { text: 'echo SNIP-$((3*3))', execute: true } })),
    );
    await expect.poll(async () => page.locator('dplab-terminal .xterm-rows').textContent(), { timeout: 10_000 }).toContain('SNIP-9');
  });

  it('three quick Runs reach the shell one after another, each after the prompt of the one before', async () => {
    const { page } = browser;
    await openSignedIn(page, course, '/terminal/');
    await page.waitForSelector('dplab-terminal[data-state="open"]', { timeout: 20_000 });
    // The first prompt is marked (SHELL_PROMPT_OSC): the shell is ready and the queue knows prompts.
    await expect.poll(async () => page.locator('dplab-terminal .xterm-rows').textContent(), { timeout: 20_000 }).toMatch(/\$ |# /);
    const queued = await page.evaluate(() => {
      const states: string[] = [];
      for (const text of ['sleep 2; echo Q-ONE-$((1+1))', 'echo Q-TWO-$((2+2))', 'echo Q-THREE-$((3+3))'])
        document.dispatchEvent(new CustomEvent('dplab:type', { detail: { text, execute: true, onState: (s: string) => states.push(s) } }));
      return { states, queued: document.querySelector('dplab-terminal')?.getAttribute('data-queued') };
    });
    expect(queued).toEqual({ states: ['sent', 'queued', 'queued'], queued: '2' });
    expect(await page.locator('dplab-terminal .dplab-terminal-status').textContent()).toContain('2 commands wait for the prompt');
    await expect.poll(async () => page.locator('dplab-terminal .xterm-rows').textContent(), { timeout: 20_000 }).toContain('Q-THREE-6');
    const lines = await page.evaluate(() =>
      (document.querySelector('dplab-terminal') as unknown as { bufferLines(): { text: string }[] })
        .bufferLines()
        .map((l) => l.text.trimEnd()),
    );
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    // Each command line is typed only after the output of the one before: nothing interleaves.
    expect(at(/^Q-ONE-2$/)).toBeGreaterThan(at(/sleep 2; echo Q-ONE/));
    expect(at(/echo Q-TWO/)).toBeGreaterThan(at(/^Q-ONE-2$/));
    expect(at(/^Q-TWO-4$/)).toBeGreaterThan(at(/echo Q-TWO/));
    expect(at(/echo Q-THREE/)).toBeGreaterThan(at(/^Q-TWO-4$/));
    expect(at(/^Q-THREE-6$/)).toBeGreaterThan(at(/echo Q-THREE/));
    expect(await page.locator('dplab-terminal').getAttribute('data-queued')).toBeNull();
  });

  it('without the token the page says how to sign in', async () => {
    const { context } = browser;
    const page = await context.newPage();
    // Signed out: the token the earlier tests stored in this origin's storage is gone.
    await page.goto(`${course.origin}/404`);
    await page.evaluate(() => localStorage.clear());
    await page.goto(`${course.origin}/terminal/`);
    await page.waitForSelector('dplab-terminal[data-state="unavailable"]', { timeout: 20_000 });
    expect(await page.locator('dplab-terminal .dplab-terminal-status').textContent()).toContain('token');
    await page.close();
  });
});
