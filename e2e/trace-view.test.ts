/**
 * Browser tier for "Trace a request" (issue 40): on the explorer, a live column over the cluster
 * test doubles, whose monitor replays real captured kernel output (test/fixtures/trace-scenario.ts).
 * Trace marks the walked chains and the chosen backends on the diagram with each backend's count;
 * lists the first request's steps, the rewrite and where each request went; tallies the requests
 * beside the rules' shares; traces a NodePort; while it runs the button waits; a runner error (no
 * such pod, a trace already on, no cluster, no Docker) shows its message and fix; IPVS and a
 * bundled fixture say why there is no trace; and a lab's Dataplane tab traces too (its screenshot in
 * DPLAB_TRACE_SHOTS, or test-results/screenshots/trace/). The visibility audit and axe-core at both
 * sizes in both themes are in the audit tier (e2e/trace-view-audit.test.ts).
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeKubeconfig, type Doubles } from '../test/fixtures/doubles.ts';
import { daemonDownRules } from '../test/fixtures/cluster-scenarios.ts';
import { kubeconfigPath } from '../scripts/catalogue/modes.ts';
import { hasChromium, chromiumNote, openSignedIn, stageWithDoubles, type Browser, type Course, type Stage } from './harness.ts';
import { SCREENSHOT_DIR } from './workspace-view.ts';
import { TRACE_COLOURS } from '../site/client/mermaid-theme.ts';
import { boxesWith, rgb, rules, showLive, trace } from './trace-stage.ts';

const SHOTS = process.env.DPLAB_TRACE_SHOTS ?? join(SCREENSHOT_DIR, 'trace');

/** What the captures (scripts/dataplane/fixtures/{xtables-monitor,nft-monitor}/clusterip.txt) hold. */
const CAPTURED = {
  iptables: {
    method: 'xtables-monitor --trace',
    steps: 15,
    firstRule: /^-A OUTPUT -d 10\.96\.45\.112\/32 .* -j TRACE$/,
    dnat: '-A KUBE-SEP-23NJSXDYUSXY5E7Q -p tcp -m comment --comment "default/web" -m tcp -j DNAT --to-destination 10.244.1.3:8080',
    chains: ['KUBE-SERVICES', 'KUBE-SVC-LOLE4ISW44XBNF3G'],
    tally: [
      ['10.244.1.2:8080', '2', '33.3%'],
      ['10.244.1.3:8080', '2', '33.3%'],
      ['10.244.2.2:8080', '2', '33.3%'],
    ],
  },
  nftables: {
    method: 'nft monitor trace',
    steps: 16,
    firstRule: /^ip daddr 10\.96\.45\.112 tcp dport 80 .* meta nftrace set 1 /,
    dnat: 'meta l4proto tcp dnat to 10.244.1.3:8080',
    chains: ['services', '@service-ips', 'service-PFISGYVC-default/web/tcp/'],
    tally: [
      ['10.244.1.2:8080', '3', '33.3%'],
      ['10.244.1.3:8080', '2', '33.3%'],
      ['10.244.2.2:8080', '1', '33.3%'],
    ],
  },
} as const;

describe.skipIf(!hasChromium)(`trace a request in the browser${chromiumNote}`, { timeout: 120_000 }, () => {
  let stage: Stage;
  let course: Course;
  let browser: Browser;
  let doubles: Doubles;

  beforeAll(async () => {
    // The page runs under its own CSP here: the trace view must work as a learner's page does.
    stage = await stageWithDoubles({ rules: rules() }, { clusterOf: 'iptables' });
    ({ course, browser, doubles } = stage);
    writeKubeconfig('nftables');
    writeKubeconfig('ipvs');
    mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await stage?.close();
  });

  for (const mode of ['iptables', 'nftables'] as const) {
    it(`${mode}: the walked path and the chosen backends are marked on the diagram, the steps and the tally show the capture`, async () => {
      const { page } = browser;
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.emulateMedia({ colorScheme: 'light' });
      await openSignedIn(page, course, '/explorer/');
      const column = await showLive(page, mode);
      const section = column.locator('.dp-trace');
      expect(await section.getByLabel(/Requests/).inputValue()).toBe('10');
      // These rules have no NodePort for web: the choice is there but cannot be taken; the node is the one drawn.
      expect(await section.getByLabel(/its NodePort/).isDisabled()).toBe(true);
      expect(await section.getByLabel(/its ClusterIP \(10\.96\.45\.112\)/).isChecked()).toBe(true);
      expect(await section.getByLabel('Node', { exact: true }).inputValue()).toBe(`dplab-${mode}-worker`);
      await trace(column);
      expect(await section.getAttribute('data-state')).toBe('ok');
      // What a screen reader hears when it ends (the status is aria-live).
      expect(await section.locator('.dp-trace-status[aria-live="polite"]').textContent()).toBe(
        `Traced 6 of 10 requests on dplab-${mode}-worker: the path they took is marked on the diagram above.`,
      );
      await column.locator('.dp-diagram[data-traced="marked"][data-rendered] svg').waitFor({ timeout: 30_000 });
      const c = CAPTURED[mode];

      // On the diagram: each backend's box with its count; the ones that got requests marked as chosen.
      const chosen = await boxesWith(column, 'dplabChosen');
      expect(chosen).toHaveLength(c.tally.filter(([, n]) => Number(n) > 0).length);
      for (const [backend, n] of c.tally)
        expect(
          chosen.some((t) => t.includes(backend) && t.endsWith(`${n} of 6 traced requests`)),
          backend,
        ).toBe(true);
      const walked = (await boxesWith(column, 'dplabWalked')).map((t) => t.replace(/ /g, ''));
      expect(walked.filter((t) => /^packetto10\.96\.45\.112:80\/TCP/.test(t))).toHaveLength(1);
      for (const chain of c.chains) expect(walked).toContain(chain);
      // The classes drew: a chosen box's border is the trace's colour; the invisible links that stack the backends stay invisible.
      const stroke = await column
        .locator('.dp-diagram svg g.node.dplabChosen :is(rect, path)')
        .first()
        .evaluate((e) => getComputedStyle(e).stroke);
      expect(stroke).toBe(rgb(TRACE_COLOURS.light.stroke));
      const styled = await column
        .locator('.dp-diagram svg path.flowchart-link')
        .evaluateAll((ps, colour) => ps.filter((p) => getComputedStyle(p).stroke === colour).length, rgb(TRACE_COLOURS.light.stroke));
      // title → chains → the backends' box, and each chosen backend's chain → its pod.
      expect(styled).toBe(c.chains.length + 1 + chosen.length);

      // In words: how it was read, the first request step by step, the rewrite, the tally, the notes.
      expect(await section.textContent()).toContain(c.method);
      const steps = section.locator('ol.dp-steps > li');
      expect(await steps.count()).toBe(c.steps);
      expect(await steps.first().locator('pre').textContent()).toMatch(c.firstRule);
      expect(await steps.locator('pre').allTextContents()).toContain(c.dnat);
      expect((await section.locator('.dp-rewrite').textContent())?.replace(/\s+/g, ' ')).toContain('10.96.45.112:80 → 10.244.1.3:8080');
      const rows = await section
        .locator('table.dp-tally tbody tr')
        .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
      expect(rows).toEqual(c.tally);
      expect(await section.locator('.dp-trace-notes').textContent()).toContain('4 of 10 requests were not seen in the trace window');
      // Each request in a line, where it went: as many lines per backend as the tally says.
      const each = (await section.locator('ol.dp-requests > li').allTextContents()).map((t) => t.replace(/\s+/g, ' '));
      expect(each).toHaveLength(6);
      for (const [backend, n] of c.tally)
        expect(
          each.filter((t) => t.includes(`: sent to ${backend} via `)),
          backend,
        ).toHaveLength(Number(n));
    });

    it(`${mode}: NodePort sends to the node's address and marks the NodePort frontend, not the ClusterIP one`, async () => {
      doubles.setScenario({ rules: rules({ scenario: 'nodeport' }) });
      try {
        const { page } = browser;
        await openSignedIn(page, course, '/explorer/');
        const column = await showLive(page, mode);
        const section = column.locator('.dp-trace');
        const nodePort = section.getByLabel(/its NodePort \(30080\)/);
        expect(await nodePort.isDisabled()).toBe(false);
        // By keyboard: the arrow key moves from the ClusterIP choice to the NodePort one.
        await section.getByLabel(/its ClusterIP/).focus();
        await page.keyboard.press('ArrowDown');
        expect(await nodePort.isChecked()).toBe(true);
        await trace(column, 3);
        expect(await section.getAttribute('data-state')).toBe('ok');
        const curls = doubles.commandLines().filter((l) => l.includes(' curl '));
        expect(curls.at(-1)).toContain('http://172.18.0.3:30080/');
        await column.locator('.dp-diagram[data-traced="marked"][data-rendered] svg').waitFor({ timeout: 30_000 });
        const walked = (await boxesWith(column, 'dplabWalked')).map((t) => t.replace(/ /g, ''));
        expect(walked.some((t) => t.includes('30080'))).toBe(true);
        expect(walked.some((t) => t.includes('10.96.45.112:80'))).toBe(false);
        expect(await boxesWith(column, 'dplabChosen')).not.toHaveLength(0);
        expect(await section.locator('.dp-trace-headline').textContent()).toContain('172.18.0.3:30080');
      } finally {
        doubles.setScenario({ rules: rules() });
      }
    });
  }

  it('while it runs the button waits and the section says so; by keyboard alone', async () => {
    doubles.setScenario({ rules: rules({ requestDelayMs: 1_500 }) });
    try {
      const { page } = browser;
      await openSignedIn(page, course, '/explorer/');
      const column = await showLive(page, 'iptables');
      const section = column.locator('.dp-trace');
      await section.getByLabel(/Requests/).fill('2');
      await section.getByLabel(/Requests/).focus();
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await expect.poll(() => section.getAttribute('aria-busy')).toBe('true');
      expect(await section.getByRole('button', { name: 'Trace' }).isDisabled()).toBe(true);
      expect(await section.locator('.dp-trace-status').textContent()).toMatch(/^Tracing 2 requests in the iptables cluster/i);
      await expect.poll(() => section.getAttribute('data-state'), { timeout: 60_000 }).toBe('ok');
      expect(await section.getAttribute('aria-busy')).toBeNull();
      expect(await section.getByRole('button', { name: 'Trace' }).isDisabled()).toBe(false);
    } finally {
      doubles.setScenario({ rules: rules() });
    }
  });

  it("a runner error shows its message and fix: a client pod that doesn't exist", async () => {
    const { page } = browser;
    await openSignedIn(page, course, '/explorer/');
    const column = await showLive(page, 'iptables');
    const section = column.locator('.dp-trace');
    await section.getByLabel('a client pod').check();
    await section.getByLabel('Client pod (namespace/name)').fill('default/ghost');
    await section.getByRole('button', { name: 'Trace' }).click();
    const alert = section.locator('.dp-error[role="alert"]');
    await alert.waitFor({ timeout: 30_000 });
    expect(await alert.textContent()).toContain('Pod default/ghost does not exist in the iptables cluster.');
    expect(await alert.textContent()).toContain('kubectl -n default get pods');
    expect(await section.locator('.dp-trace-status').textContent()).toMatch(/^Could not trace: Pod default\/ghost/);
    expect(await section.getByRole('button', { name: 'Trace' }).isDisabled()).toBe(false);
    // A malformed pod never reaches the runner.
    await section.getByLabel('Client pod (namespace/name)').fill('ghost');
    await section.getByRole('button', { name: 'Trace' }).click();
    expect(await section.locator('.dp-trace-status').textContent()).toContain('Give the client pod as namespace/name');
  });

  it('a trace already on the node: the message and its fix, and Trace works again once it is gone', async () => {
    const { page } = browser;
    await openSignedIn(page, course, '/explorer/');
    const column = await showLive(page, 'iptables');
    const section = column.locator('.dp-trace');
    doubles.setState({ traced: 'on' });
    try {
      await trace(column, 2);
      const alert = section.locator('.dp-error[role="alert"]');
      expect(await alert.textContent()).toContain('A trace is already running on dplab-iptables-worker.');
      expect(await alert.textContent()).toContain('dplab trace <mode> --sweep');
    } finally {
      doubles.setState({ traced: 'off' });
    }
    await trace(column, 2);
    expect(await section.getAttribute('data-state')).toBe('ok');
    expect(await section.locator('.dp-error').count()).toBe(0);
  });

  it('the cluster gone, then Docker gone: each says what stops the trace and how to fix it', async () => {
    const { page } = browser;
    await openSignedIn(page, course, '/explorer/');
    const column = await showLive(page, 'iptables');
    const section = column.locator('.dp-trace');
    const alert = section.locator('.dp-error[role="alert"]');
    rmSync(kubeconfigPath('iptables'));
    try {
      await trace(column, 2);
      expect(await alert.textContent()).toContain('The iptables cluster is not running');
      expect(await alert.textContent()).toContain('dplab up iptables');
      // No Docker: the blocker is named, with its fix, rather than a Start that cannot work.
      doubles.setScenario({ rules: [...daemonDownRules(), ...rules()] });
      await trace(column, 2);
      expect(await alert.innerText()).toMatch(/Docker is not running[\s\S]*Fix: Start Docker[\s\S]*Then press Trace again\./);
      expect(await section.locator('.dp-trace-status').textContent()).toMatch(/^Could not trace: /);
    } finally {
      doubles.setScenario({ rules: rules() });
      writeKubeconfig('iptables');
    }
  });

  it('IPVS and a bundled fixture say why there is no trace, with no Trace button', async () => {
    const { page } = browser;
    await openSignedIn(page, course, '/explorer/');
    const fixture = page.locator('dplab-dataplane .dp-column').nth(1);
    await fixture.locator('.dp-diagram[data-rendered] svg').waitFor({ timeout: 30_000 });
    expect(await fixture.locator('.dp-trace').textContent()).toContain('it needs a running cluster');
    const column = await showLive(page, 'ipvs');
    const section = column.locator('.dp-trace');
    expect(await section.textContent()).toMatch(
      /not available in the ipvs cluster yet\. IPVS picks the backend inside the kernel’s ip_vs module/,
    );
    expect(await section.getByRole('button', { name: 'Trace' }).count()).toBe(0);
  });

  it("a lab's Dataplane tab traces too", async () => {
    const { page } = browser;
    await openSignedIn(page, course, '/labs/first-service/');
    await page.locator('[role="tab"][data-tab="dataplane"]').click();
    const panel = page.locator('dplab-dataplane');
    await panel.getByLabel('Service (namespace/name)').fill('default/web');
    await panel.getByRole('button', { name: 'Show the dataplane' }).click();
    const column = panel.locator('.dp-column').first();
    await column.locator('.dp-diagram[data-rendered] svg').waitFor({ timeout: 60_000 });
    await trace(column, 6);
    await column.locator('.dp-diagram[data-traced="marked"][data-rendered] svg').waitFor({ timeout: 30_000 });
    expect(await column.locator('table.dp-tally tbody tr').count()).toBe(3);
    expect(await boxesWith(column, 'dplabChosen')).toHaveLength(3);
    await column.locator('.dp-trace-form').evaluate((e) => e.scrollIntoView({ block: 'start' }));
    await page.screenshot({ path: join(SHOTS, 'lab-dataplane-tab.png') });
  });
});
