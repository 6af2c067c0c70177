/**
 * The learner's loop end to end, in Chromium, against the cluster test doubles: open a lab with
 * no cluster (its files are there at once), Start, watch the progress, the cluster becomes
 * ready, the lab sets itself up, a node gets a shell tab, a snippet runs in the terminal, Check
 * passes; after a reload the mode is the same in terminal and checks; switching the mode
 * reconnects the terminal with the new KUBECONFIG and its notice names the new mode. Every fix a
 * message names is looked for where the message is shown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { healthyRules } from '../test/fixtures/cluster-scenarios.ts';
import type { Doubles } from '../test/fixtures/doubles.ts';
import { firstServiceScenario } from '../test/fixtures/first-service-scenario.ts';
import { chromiumNote, hasChromium, openSignedIn, stageWithDoubles, type Stage } from './harness.ts';
import { screenshot, terminalText as bufferText } from './workspace-view.ts';

const PAGE = '/labs/first-service/';
const step = (id: string) => `dplab-lab .dplab-step[data-step="${id}"]`;
const shell = 'dplab-terminal:not([node])';

async function terminalText(page: Page, selector = shell): Promise<string> {
  return (await page.locator(`${selector} .xterm-rows`).textContent())?.replace(/\u00a0/g, ' ') ?? '';
}

async function typeInShell(page: Page, line: string): Promise<void> {
  await page.locator(`${shell} .xterm`).click();
  await page.keyboard.type(line);
  await page.keyboard.press('Enter');
}

/** The top bar's Start button for the page's mode: what "Press Start in the bar at the top" names. */
function startButton(page: Page) {
  return page.locator('.dplab-ws-bar .dplab-cluster:not([hidden]) dplab-cluster-panel button', { hasText: /^Start$/ });
}

/** A fix that names the Start button or a `dplab` command must find it where it is shown. */
async function fixesExist(page: Page, text: string): Promise<void> {
  if (/\bStart\b/.test(text) && /button|bar at the top|Press Start/.test(text))
    await expect(startButton(page).isVisible()).resolves.toBe(true);
  if (/`dplab [a-z]/.test(text)) {
    await typeInShell(page, 'command -v dplab && echo DPLAB-ON-PATH');
    await expect.poll(() => terminalText(page), { timeout: 10_000 }).toContain('DPLAB-ON-PATH');
  }
}

describe.skipIf(!hasChromium)(`the learner's journey${chromiumNote}`, { timeout: 90_000 }, () => {
  let stage: Stage;
  let page: Page;
  let doubles: Doubles;
  const checkModes: string[] = [];

  beforeAll(async () => {
    const lab = firstServiceScenario('iptables');
    stage = await stageWithDoubles({
      rules: [
        // Provisioning takes a moment, so the progress can be seen.
        {
          tool: 'kind',
          match: '^create cluster --name dplab-iptables ',
          delayMs: 1200,
          stderr: ' ✓ Preparing nodes\n',
          set: { created: 'yes' },
          writesAfter: '--kubeconfig',
          writes: 'apiVersion: v1\nkind: Config\n',
        },
        // A node shell: what `docker exec -it <node> bash` would print before its prompt.
        {
          tool: 'docker',
          match: '^exec -it dplab-iptables-worker bash$',
          stdout: 'root@dplab-iptables-worker:/# NODE-SHELL-UP\r\n',
          delayMs: 300,
        },
        ...lab.rules,
        ...healthyRules('iptables'),
      ],
    });
    page = stage.browser.page;
    doubles = stage.doubles;
    page.on('request', (r) => {
      if (r.method() === 'POST' && /\/check$/.test(r.url())) checkModes.push(JSON.parse(r.postData() ?? '{}').mode);
    });
    await page.setViewportSize({ width: 1280, height: 800 });
  });
  afterAll(async () => {
    await stage?.close();
  });

  it('with no cluster: the Start button is in the bar, the files are there, and the notices name what exists', async () => {
    await openSignedIn(page, stage.course, PAGE);
    await expect
      .poll(() => page.locator('.dplab-ws-bar dplab-cluster-panel[mode="iptables"]').getAttribute('data-state'), { timeout: 15_000 })
      .toBe('absent');
    await expect(startButton(page).isVisible()).resolves.toBe(true);
    await page.waitForSelector(`${shell}[data-state="open"]`, { timeout: 20_000 });
    // The terminal says the cluster is not running, and names the Start button and dplab.
    await expect.poll(() => terminalText(page), { timeout: 10_000 }).toContain('The iptables cluster is not running');
    // Before the prompt, never in the middle of what the learner types.
    await expect.poll(() => terminalText(page), { timeout: 10_000 }).toContain('(iptables) workspace');
    const first = await terminalText(page);
    expect(first.indexOf('The iptables cluster is not running')).toBeLessThan(first.indexOf('(iptables) workspace'));
    await fixesExist(page, first);
    await expect.poll(() => page.locator('.dplab-setup').getAttribute('data-state'), { timeout: 10_000 }).toBe('waiting');
    // The first snippet reads a workspace file: it is there before any cluster.
    await page
      .locator(`${step('deploy-web')} [data-action="run"]`)
      .first()
      .click();
    // Read from the terminal's buffer: how much of the file stays on screen depends on the rows the
    // terminal has, so on the fonts (Noto Sans Mono's rows are 22 px, DejaVu Sans Mono's 19 px).
    const shown = async () => (await bufferText(page)).lines.map((l) => l.text).join('\n');
    await expect.poll(shown, { timeout: 10_000 }).toMatch(/^kind: Deployment$/m);
    await expect.poll(shown, { timeout: 10_000 }).toMatch(/^ {12}periodSeconds: 2$/m);
    expect(await shown()).not.toContain('No such file');
    await screenshot(page, 'journey-1-no-cluster');
  });

  it('Start shows the progress, the cluster becomes ready, and the lab sets itself up', async () => {
    await startButton(page).click();
    const panel = page.locator('.dplab-ws-bar dplab-cluster-panel[mode="iptables"]');
    await panel.locator('li[data-state="running"]').first().waitFor({ timeout: 10_000 });
    await screenshot(page, 'journey-2-starting');
    await expect.poll(() => panel.getAttribute('data-state'), { timeout: 30_000 }).toBe('ready');
    await expect.poll(() => page.locator('.dplab-setup').getAttribute('data-state'), { timeout: 15_000 }).toBe('done');
    expect(await page.locator('.dplab-setup').textContent()).toContain('Lab set up on iptables');
    const lines = doubles.commandLines();
    expect(lines.some((l) => /create namespace lab-first-service$/.test(l))).toBe(true);
    expect(lines.some((l) => /label namespace lab-first-service dplab\.io\/setup=first-service/.test(l))).toBe(true);
  });

  it('each node of the cluster gets a shell tab, opened with the handle’s docker exec', async () => {
    const tabs = page.locator('dplab-terminal-tabs [role="tab"][data-tab="node"]');
    await expect.poll(() => tabs.allTextContents(), { timeout: 10_000 }).toEqual(['control-plane', 'worker', 'worker2']);
    await page.getByRole('tab', { name: 'worker', exact: true }).click();
    const node = 'dplab-terminal[node="dplab-iptables-worker"]';
    await expect.poll(() => terminalText(page, node), { timeout: 15_000 }).toContain('NODE-SHELL-UP');
    expect(doubles.calls().some((c) => c.tool === 'docker' && c.argv.join(' ') === 'exec -it dplab-iptables-worker bash')).toBe(true);
    await page.getByRole('tab', { name: 'Your shell' }).click();
  });

  it('a snippet typed into the terminal does the step, and Check passes', async () => {
    await page
      .locator(`${step('deploy-web')} [data-action="run"]`)
      .nth(1)
      .click();
    await expect.poll(() => terminalText(page), { timeout: 10_000 }).toContain('deployment.apps/web created');
    await page.locator(`${step('deploy-web')} [data-action="check"]`).click();
    await page.locator(`${step('deploy-web')} .dplab-result[data-status="pass"]`).waitFor({ timeout: 20_000 });
    expect(checkModes.at(-1)).toBe('iptables');
    expect(await page.locator('.dplab-progress-text').textContent()).toBe('1 of 4 steps done on iptables');
    await screenshot(page, 'journey-3-checked');
  });

  it('switching the mode reconnects the terminal with the new KUBECONFIG, and the notice names the new mode', async () => {
    await page.locator('select[data-action="mode"]').selectOption('nftables');
    await expect.poll(() => page.locator(shell).getAttribute('data-connected-mode')).toBe('nftables');
    await page.waitForSelector(`${shell}[data-state="open"]`, { timeout: 20_000 });
    await expect.poll(() => terminalText(page), { timeout: 10_000 }).toContain('The nftables cluster is not running');
    const text = await terminalText(page);
    expect(text).toContain('[switched to the nftables cluster (dplab-nftables)');
    expect(text).not.toContain('iptables cluster is not running');
    await typeInShell(page, 'echo "KC=$KUBECONFIG"');
    await expect.poll(() => terminalText(page), { timeout: 10_000 }).toMatch(/KC=\S*dplab-nftables\.yaml/);
    // Node tabs of the old cluster are gone; the bar shows the new mode's cluster with its Start button.
    expect(await page.locator('dplab-terminal-tabs [data-tab="node"]').count()).toBe(0);
    await expect
      .poll(() => page.locator('.dplab-ws-bar .dplab-cluster:not([hidden]) dplab-cluster-panel').getAttribute('mode'))
      .toBe('nftables');
    await fixesExist(page, text);
  });

  it('after a reload the terminal and Check use the same mode', async () => {
    await page.reload();
    await page.waitForSelector(`${shell}[data-state="open"]`, { timeout: 20_000 });
    await expect.poll(() => terminalText(page), { timeout: 10_000 }).toMatch(/not running.*\(nftables\) workspace/);
    expect(await page.locator('select[data-action="mode"]').inputValue()).toBe('nftables');
    expect(await page.locator(shell).getAttribute('data-connected-mode')).toBe('nftables');
    await typeInShell(page, 'echo "KC=$KUBECONFIG"');
    await expect.poll(() => terminalText(page), { timeout: 10_000 }).toMatch(/KC=\S*dplab-nftables\.yaml/);
    await page.locator(`${step('deploy-web')} [data-action="check"]`).click();
    const result = page.locator(`${step('deploy-web')} .dplab-result[data-status="error"]`);
    await result.waitFor({ timeout: 20_000 });
    expect(checkModes.at(-1)).toBe('nftables');
    const said = (await result.textContent()) ?? '';
    expect(said).toContain('The nftables cluster is not running');
    await fixesExist(page, said);
  });

  it('a refused solution is headed as the solution, and its fix names what is there', async () => {
    const s = page.locator(step('deploy-web'));
    await s.locator('details.dplab-solution > summary').click();
    await s.locator('[data-action="solve"]').click();
    const result = s.locator('.dplab-result[data-status="error"]');
    await expect.poll(async () => (await result.textContent()) ?? '', { timeout: 20_000 }).toMatch(/^Could not apply the solution: /);
    const said = (await result.textContent()) ?? '';
    expect(said).not.toContain('Could not check');
    await fixesExist(page, said);
    await screenshot(page, 'journey-4-refused-solve');
  });
});
