/**
 * The cluster panel in Chromium against the cluster test doubles: live progress while the
 * iptables cluster comes up, the ready state, delete, and a failed create with its error,
 * details and Retry. The runner runs in this process, so its kind/kubectl/docker calls hit
 * the doubles on PATH.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Doubles } from '../test/fixtures/doubles.ts';
import { scenario } from '../test/fixtures/cluster-scenarios.ts';
import { hasChromium, chromiumNote, openSignedIn, stageWithDoubles, type Browser, type Stage } from './harness.ts';

/** Long enough to see the running spinner, short enough for a quick test. */
const CREATE_DELAY_MS = 1500;

describe.skipIf(!hasChromium)(`cluster panel${chromiumNote}`, () => {
  let stage: Stage;
  let doubles: Doubles;
  let browser: Browser;

  beforeAll(async () => {
    stage = await stageWithDoubles(
      scenario('iptables', [
        {
          tool: 'kind',
          match: '^create cluster --name dplab-iptables ',
          delayMs: CREATE_DELAY_MS,
          stderr: ' ✓ Preparing nodes\n',
          set: { created: 'yes' },
        },
      ]),
    );
    ({ browser, doubles } = stage);
    await openSignedIn(browser.page, stage.course, '/clusters/');
  });
  afterAll(async () => {
    await stage?.close();
  });

  const panel = () => browser.page.locator('dplab-cluster-panel[mode="iptables"]');

  it('shows the absent cluster with a Start button', async () => {
    await expect.poll(() => panel().getAttribute('data-state'), { timeout: 15_000 }).toBe('absent');
    await expect.poll(() => panel().locator('button', { hasText: 'Start' }).count()).toBe(1);
  });

  it('streams progress while the cluster comes up, then shows it ready', async () => {
    await panel().locator('button', { hasText: 'Start' }).click();
    await panel().locator('li[data-state="running"]').first().waitFor({ timeout: 10_000 });
    expect(await panel().getAttribute('data-state')).toBe('provisioning');
    await expect.poll(() => panel().getAttribute('data-state'), { timeout: 20_000 }).toBe('ready');
    expect(await panel().textContent()).toContain('3/3 nodes Ready');
    const lines = doubles.commandLines();
    expect(
      // The mode's own config: Docker here has none of the labs' images to put into the workers' node image.
      lines.some((l) => l.startsWith('kind create cluster --name dplab-iptables --config ') && l.includes('kind-configs/iptables.yaml')),
    ).toBe(true);
  });

  it('Delete removes the cluster', async () => {
    await panel().locator('button', { hasText: 'Delete' }).click();
    await expect.poll(() => panel().getAttribute('data-state'), { timeout: 15_000 }).toBe('absent');
    expect(doubles.commandLines().some((l) => l.startsWith('kind delete cluster --name dplab-iptables'))).toBe(true);
  });

  it('a failed create shows the error, its details and Start (again), and cleans up', async () => {
    doubles.setScenario(
      scenario('iptables', [
        {
          tool: 'kind',
          match: '^create cluster --name dplab-iptables ',
          stderr: 'ERROR: failed to create cluster: could not find a log line that matches "Reached target .*Multi-User System.*"\n',
          exit: 1,
          set: { created: 'yes' },
        },
      ]),
    );
    const deletesBefore = doubles.commandLines().filter((l) => l.startsWith('kind delete cluster')).length;
    await panel().locator('button', { hasText: 'Start' }).click();
    const alert = panel().locator('[role="alert"]');
    await alert.waitFor({ timeout: 20_000 });
    expect(await alert.textContent()).toContain('Error:');
    expect(await alert.locator('details pre').textContent()).toContain('failed to create cluster');
    await expect.poll(() => panel().locator('button', { hasText: 'Start' }).count(), { timeout: 10_000 }).toBe(1);
    await expect
      .poll(() => doubles.commandLines().filter((l) => l.startsWith('kind delete cluster')).length)
      .toBeGreaterThan(deletesBefore);
  });

  it('its buttons are reachable from the keyboard', async () => {
    const { page } = browser;
    await page.locator('body').click();
    let reached = false;
    for (let i = 0; i < 60 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => {
        const a = document.activeElement;
        return !!a && a.tagName === 'BUTTON' && !!a.closest('dplab-cluster-panel[mode="iptables"]');
      });
    }
    expect(reached).toBe(true);
  });
});
