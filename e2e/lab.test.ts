/**
 * Browser tier for the lab engine: the first-service page against the cluster test doubles.
 * Check shows the failure message inline, a snippet arrives in the terminal, progress and
 * hints survive a reload, and a mode whose cluster is absent shows an error (not a fail).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Doubles } from '../test/fixtures/doubles.ts';
import { firstServiceScenario } from '../test/fixtures/first-service-scenario.ts';
import { DOCKER_INFO } from '../test/fixtures/cluster-scenarios.ts';
import { hasChromium, chromiumNote, openSignedIn, stageWithDoubles, type Browser, type Course, type Stage } from './harness.ts';

const PAGE = '/labs/first-service/';
const step = (id: string) => `dplab-lab .dplab-step[data-step="${id}"]`;

describe.skipIf(!hasChromium)(`lab page in the browser${chromiumNote}`, { timeout: 60_000 }, () => {
  let stage: Stage;
  let course: Course;
  let browser: Browser;
  let doubles: Doubles;

  beforeAll(async () => {
    // A machine with Docker running (`docker info` answers), so the page offers no replay.
    const docker = { tool: 'docker' as const, match: '^info ', stdout: DOCKER_INFO };
    stage = await stageWithDoubles({ rules: [...firstServiceScenario('iptables').rules, docker] }, { clusterOf: 'iptables' });
    ({ course, browser, doubles } = stage);
  });
  afterAll(async () => {
    await stage?.close();
  });

  it('Check shows why the first step is not done, with expected versus seen', async () => {
    const { page } = browser;
    await openSignedIn(page, course, PAGE);
    await page.locator(`${step('deploy-web')} [data-action="check"]`).click();
    const result = page.locator(`${step('deploy-web')} .dplab-result[data-status="fail"]`);
    await result.waitFor({ timeout: 20_000 });
    expect(await result.textContent()).toContain('There is no Deployment web in namespace lab-first-service yet.');
    expect(await result.locator('td').allTextContents()).toEqual(expect.arrayContaining(['Deployment web', 'exists', 'not found']));
    expect(await page.locator(step('deploy-web')).getAttribute('data-status')).toBe('fail');
    expect(await page.locator(step('deploy-web')).getAttribute('aria-busy')).toBeNull();
  });

  it('a snippet click types the command into the terminal', async () => {
    const { page } = browser;
    await page.waitForSelector('dplab-terminal[data-state="open"]', { timeout: 20_000 });
    await page
      .locator(`${step('deploy-web')} [data-action="run"]`)
      .first()
      .click();
    // The lab's files exist from the start, so the manifest itself fills the screen ...
    await expect
      .poll(async () => page.locator('dplab-terminal:not([node]) .xterm-rows').textContent(), { timeout: 10_000 })
      .toContain('app: web');
    // ... and the shell's history shows the command the click typed (its line scrolled away).
    await page.locator('dplab-terminal:not([node]) .xterm').click();
    await page.keyboard.type('fc -ln -1');
    await page.keyboard.press('Enter');
    await expect
      .poll(async () => page.locator('dplab-terminal:not([node]) .xterm-rows').textContent(), { timeout: 10_000 })
      .toContain('cat first-service/web-deployment.yaml');
  });

  it('progress and revealed hints survive a reload', async () => {
    const { page } = browser;
    doubles.setState({ s1: '1' });
    await page.locator(`${step('deploy-web')} [data-action="check"]`).click();
    await page.locator(`${step('deploy-web')} .dplab-result[data-status="pass"]`).waitFor({ timeout: 20_000 });
    await page.locator(`${step('expose-web')} [data-action="hint"]`).click();
    await page.reload();
    await page.waitForFunction(
      () => document.querySelector('dplab-lab .dplab-step[data-step="deploy-web"]')?.getAttribute('data-status') === 'pass',
    );
    expect(await page.locator('dplab-lab .dplab-progress-text').textContent()).toBe('1 of 4 steps done on iptables');
    expect(await page.locator(`${step('expose-web')} .dplab-hint-list li:not([hidden])`).count()).toBe(1);
  });

  it('on a mode whose cluster is absent, Check says so as an error with the fix', async () => {
    const { page } = browser;
    await page.locator(`${step('deploy-web')} [data-action="check"]`).click();
    await page.locator(`${step('deploy-web')} .dplab-result[data-status="pass"]`).waitFor({ timeout: 20_000 });
    await page.locator('dplab-lab select[data-action="mode"]').selectOption('ipvs');
    // The iptables result is gone, its status too: nothing on the page claims a pass on ipvs.
    await expect.poll(() => page.locator(`${step('deploy-web')} .dplab-result[data-status]`).count()).toBe(0);
    await page.locator(`${step('deploy-web')} [data-action="check"]`).click();
    const result = page.locator(`${step('deploy-web')} .dplab-result[data-status="error"]`);
    await result.waitFor({ timeout: 20_000 });
    expect(await result.textContent()).toContain('The ipvs cluster is not running');
    expect(await result.textContent()).toContain('dplab up ipvs');
  });
});
