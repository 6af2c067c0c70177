/**
 * A snippet with a placeholder in the browser: its button says Type, and a click puts the command
 * at the shell's prompt without running it, the cursor just after the placeholder, so Backspace
 * erases it and the learner types their own value. Proved in a real shell: the line is still
 * open after the click (no Enter), and what Backspace leaves is the command with the value.
 */
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { hasChromium, chromiumNote, openSignedIn } from './harness.ts';
import { courseAndBrowser } from './course-and-browser.ts';
import { screenshot } from './workspace-view.ts';

const shell = 'dplab-terminal:not([node])';
const rows = (page: Page) => page.locator(`${shell} .xterm-rows`).textContent();

describe.skipIf(!hasChromium)(`Type on a placeholder snippet${chromiumNote}`, { timeout: 90_000 }, () => {
  const stage = courseAndBrowser();

  it('types the command without Enter, the cursor after the placeholder', async () => {
    const { page } = stage.browser;
    await openSignedIn(page, stage.course, '/labs/iptables-chains/');
    await page.waitForSelector(`${shell}[data-state="open"]`, { timeout: 30_000 });
    await expect.poll(() => rows(page), { timeout: 30_000 }).toContain('#');

    // The answer is named first, on a line of its own (`count="<count>"`); the next snippet stores it.
    const snippet = page.locator('.dplab-snippet[data-placeholders="<count>"]', { hasText: 'Your answer for count' });
    const type = snippet.locator('[data-action="run"]');
    expect(await type.textContent()).toBe('Type');
    expect(await type.getAttribute('title')).toContain('without pressing Enter');
    expect(await snippet.locator('mark.dplab-placeholder').allTextContents()).toEqual(['<count>']);
    const command = (await type.getAttribute('data-command'))!;
    expect(command).toBe('count="<count>"');
    const store = page.locator('.dplab-snippet:not([data-placeholders])', { hasText: 'Write the count down' });
    expect(await store.locator('[data-action="run"]').textContent()).toBe('Run');
    expect(await store.locator('[data-action="run"]').getAttribute('data-command')).toContain('--from-literal=count="$count"');

    await snippet.scrollIntoViewIfNeeded();
    await type.click();
    await expect.poll(() => rows(page), { timeout: 10_000 }).toContain('count="<count>"');
    await screenshot(page, 'lab-placeholder-typed');
    // Still the line being edited: Backspace erases the placeholder (the cursor sits after it), a
    // value goes in its place, and a `#` at the line's start keeps the shell from running it.
    await page.locator(`${shell} .xterm`).click();
    for (let i = 0; i < '<count>'.length; i++) await page.keyboard.press('Backspace');
    await page.keyboard.type('7');
    await page.keyboard.press('Control+a');
    await page.keyboard.type('#');
    await page.keyboard.press('Enter');
    await page.keyboard.type('fc -ln -1 | cat -A');
    await page.keyboard.press('Enter');
    // The one history entry is the whole command with the value: nothing ran on the click.
    const expected = `#${command.replace('<count>', '7')}$`;
    await expect.poll(async () => (await rows(page))?.replace(/\s+/g, ''), { timeout: 10_000 }).toContain(expected.replace(/\s+/g, ''));
    expect(await rows(page)).not.toContain('syntax error');
  });

  it('a snippet without a placeholder still runs at once', async () => {
    const { page } = stage.browser;
    const run = page.locator('.dplab-snippet:not([data-placeholders])').first().locator('[data-action="run"]');
    expect(await run.textContent()).toBe('Run');
    expect(await run.getAttribute('title')).toBeNull();
  });
});
