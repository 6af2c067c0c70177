/**
 * A learner without Docker (the doubles play its daemon down) walks first-service and etp-local
 * as replays of their real recordings: the page points once at the blocker, every step's replay
 * shows its commands, what the cluster printed and what Check said before and after (the same
 * words the step's evaluate gives on those recordings), labelled with kind, Kubernetes and the
 * kernel; Check and Apply solution name Docker, never Start; kubectl in the lab shell says which
 * cluster is missing. The replay at each size and theme (screenshots, axe) is in
 * e2e/replay-views.test.ts, with the whole-course audits.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { daemonDownRules, scenario } from '../test/fixtures/cluster-scenarios.ts';
import { requireLab } from '../scripts/labs/registry.ts';
import { replayStep } from '../scripts/labs/step-replay.ts';
import { chromiumNote, hasChromium, openSignedIn, stageWithDoubles, type Stage } from './harness.ts';
import { screenshot } from './workspace-view.ts';

const step = (id: string) => `dplab-lab .dplab-step[data-step="${id}"]`;

describe.skipIf(!hasChromium)(`labs without Docker, as replays${chromiumNote}`, { timeout: 120_000 }, () => {
  let stage: Stage;

  beforeAll(async () => {
    stage = await stageWithDoubles(scenario('iptables', daemonDownRules()));
  });
  afterAll(async () => {
    await stage?.close();
  });
  // One browser for the file (the runner closes idle sockets quietly, so no test inherits a bad one);
  // each test starts at the laptop size.
  beforeEach(async () => {
    await stage.browser.page.setViewportSize({ width: 1280, height: 800 });
  });

  for (const labId of ['first-service', 'etp-local']) {
    it(`${labId}: every step replays its recordings, labelled, from the keyboard`, async () => {
      const { page } = stage.browser;
      const lab = requireLab(labId);
      await openSignedIn(page, stage.course, `/labs/${labId}/`);
      // The bar says what stops the cluster, with its fix; the instructions point there once and offer the replay.
      const note = page.locator('.dplab-blocked');
      await note.waitFor({ timeout: 20_000 });
      expect(await note.innerText()).toContain('No iptables cluster can start on this machine');
      const bar = page.locator('.dplab-cluster:not([hidden]) .dplab-cp-error');
      expect(await bar.innerText()).toMatch(/Docker is not running[\s\S]*Fix: Start Docker/);
      const said = await page.evaluate(
        () => (document.querySelector('.dplab-instructions') as HTMLElement).innerText.match(/Docker is not running/g)?.length ?? 0,
      );
      expect(said, 'the instructions do not repeat the blocker').toBe(0);

      for (const s of lab.steps) {
        const expected = replayStep(lab, s, 'iptables');
        const button = page.locator(`${step(s.id)} button[data-replay]`);
        await button.focus();
        await page.keyboard.press('Enter');
        expect(await button.getAttribute('aria-expanded')).toBe('true');
        const region = page.locator(`${step(s.id)} .dplab-replay`);
        await region.locator('.dplab-replay-source').waitFor({ timeout: 15_000 });
        const text = await region.innerText();
        expect(text).toMatch(/^RECORDING|^Recording/);
        expect(text).toContain(`Not your cluster. Recorded on ${expected.solved.source.label} (the iptables mode).`);
        expect(expected.solved.source.label).toMatch(/^kind v\d+\.\d+\.\d+ · Kubernetes v\d+\.\d+\.\d+ · kernel \S+ · /);
        const results = region.locator('.dplab-result');
        expect(await results.nth(0).getAttribute('data-status')).toBe('fail');
        expect((await results.nth(0).innerText()).replace(/\s+/g, ' ')).toContain(
          `Check said: not yet. ${plain(expected.unsolved.message)}`,
        );
        expect(await results.nth(1).getAttribute('data-status')).toBe('pass');
        expect((await results.nth(1).innerText()).replace(/\s+/g, ' ')).toContain(`Check said: done. ${plain(expected.solved.message)}`);
        expect(await region.locator('pre code').innerText()).toBe(expected.commands.join('\n'));
        for (const o of expected.outputs) expect(text).toContain(o.text.split('\n')[0]!);
        // A replay is not the learner's work: the step stays not done.
        expect(await page.locator(step(s.id)).getAttribute('data-status')).toBe('todo');
      }
      // Nothing in a replay is wider than the pane; long output scrolls in its own box.
      const overflow = await page.evaluate(() => {
        const right = document.querySelector('.dplab-instructions')!.getBoundingClientRect().right;
        return [...document.querySelectorAll<HTMLElement>('.dplab-replay, .dplab-replay *')]
          .filter(
            (e) =>
              e.getBoundingClientRect().right > right + 1 || (e.classList.contains('dplab-replay') && e.scrollWidth > e.clientWidth + 1),
          )
          .map((e) => `${e.tagName.toLowerCase()}.${e.className}: ${(e.textContent ?? '').slice(0, 40)}`);
      });
      expect(overflow).toEqual([]);
      const output = page.locator('.dplab-replay-output').first();
      await output.scrollIntoViewIfNeeded();
      await screenshot(page, `replay-${labId}-output-1280x800`);
    });
  }

  it('Check and Apply solution name the blocker and the replay, never Start', async () => {
    const { page } = stage.browser;
    await openSignedIn(page, stage.course, '/labs/first-service/');
    await page.locator('.dplab-blocked').waitFor({ timeout: 20_000 });
    await page.locator(`${step('deploy-web')} [data-action="check"]`).click();
    const result = page.locator(`${step('deploy-web')} > .dplab-step-body > .dplab-check > .dplab-result[data-status="error"]`);
    await result.waitFor({ timeout: 10_000 });
    const checkText = await result.innerText();
    expect(checkText).toContain('Could not check: No cluster can start on this machine: Docker is not running');
    expect(checkText).toContain('Replay the recording');
    expect(checkText).not.toMatch(/\bStart\b(?! Docker)/);
    await page.locator(`${step('deploy-web')} summary`, { hasText: 'Show solution' }).click();
    await page.locator(`${step('deploy-web')} [data-action="solve"]`).click();
    expect(await result.innerText()).toContain('Could not apply the solution: No cluster can start on this machine: Docker is not running');
  });

  it('kubectl in the lab shell says which cluster is missing and how to start it', async () => {
    const { page } = stage.browser;
    await openSignedIn(page, stage.course, '/labs/first-service/');
    const term = page.locator('dplab-terminal:not([node])');
    await page.waitForSelector('dplab-terminal:not([node])[data-state="open"]', { timeout: 20_000 });
    // The notice before the prompt names Docker, not Start.
    await expect.poll(() => term.locator('.xterm-rows').innerText(), { timeout: 15_000 }).toContain('Docker is not running');
    await term.locator('.xterm').click();
    await page.keyboard.type('kubectl get pods');
    await page.keyboard.press('Enter');
    await expect
      .poll(async () => (await term.locator('.xterm-rows').innerText()).replace(/\s+/g, ' '), { timeout: 15_000 })
      .toContain('kubectl: the iptables cluster (dplab-iptables) is not running');
    expect(await term.locator('.xterm-rows').innerText()).not.toContain('localhost:8080');
  });
});

/** The message as the page shows it: rich text's backticks become code, which innerText reads plain. */
function plain(message: string): string {
  return message.replace(/`/g, '').replace(/\s+/g, ' ');
}
