/**
 * A slow ~/.bashrc (pyenv's lock took 60 s here) used to leave a blank terminal with no word why:
 * "Starting your shell…" went at the first output. Now it stays until the prompt, and past a few
 * seconds names the rc file and the option that skips it. The fake HOME's .bashrc prints a line,
 * then waits for a file the test writes (bounded to 60 s), so nothing here depends on speed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyEnv } from '../test/fixtures/doubles.ts';
import { chromiumNote, hasChromium, launchBrowser, openSignedIn, startCourse, type Browser, type Course } from './harness.ts';

describe.skipIf(!hasChromium)(`shell start with a slow ~/.bashrc${chromiumNote}`, () => {
  let course: Course;
  let browser: Browser;
  let home: string;
  let restore: () => void;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'dplab-home-'));
    writeFileSync(
      join(home, '.bashrc'),
      'echo "rc: loading plugins"\ni=0\nwhile [ ! -f "$HOME/go" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n',
    );
    // vitest.config.ts sets DPLAB_SHELL_NORC=1 for every test: this one reads the rc file.
    restore = applyEnv({ HOME: home, DPLAB_SHELL: '/bin/bash', DPLAB_SHELL_NORC: '0' });
    course = await startCourse();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await course?.close();
    restore?.();
    rmSync(home, { recursive: true, force: true });
  });

  it('stays until the prompt, then says which rc file is read and how to skip it', { timeout: 90_000 }, async () => {
    const { page } = browser;
    await openSignedIn(page, course, '/terminal/');
    const status = page.locator('dplab-terminal .dplab-terminal-status');
    const rows = page.locator('dplab-terminal .xterm-rows');
    await expect.poll(() => rows.textContent(), { timeout: 20_000 }).toContain('rc: loading plugins');
    // Output came, the prompt did not: still starting.
    expect(await status.textContent()).toContain('Starting your shell');
    await expect.poll(() => status.textContent(), { timeout: 20_000 }).toContain('still reading your ~/.bashrc');
    expect(await status.textContent()).toContain('DPLAB_SHELL_NORC=1 npm start');
    writeFileSync(join(home, 'go'), '');
    await expect.poll(() => status.textContent(), { timeout: 30_000 }).toBe('');
    await expect.poll(() => rows.textContent(), { timeout: 10_000 }).toMatch(/\(dplab\) workspace [$#]/);
  });
});
