/**
 * Browser tier for scale-compare's chart: measurements kept in localStorage from earlier
 * clusters are drawn after a reload (one series per mode, every number in the table), and a
 * Check against the cluster test doubles (iptables, the lab's own solved observations) adds
 * its figures as a new series that survives the next reload.
 * `DPLAB_SCREENSHOT=/tmp/chart.png` saves a picture of the chart section.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Doubles, type Rule, type Scenario } from '../test/fixtures/doubles.ts';
import { DOCKER_INFO } from '../test/fixtures/cluster-scenarios.ts';
import { recordedObservations } from '../test/fixtures/recorded.ts';
import { scaleFigures } from '../scripts/labs/checks/scale.ts';
import type { Measurement } from '../site/client/lab/measurements.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { labsDir } from '../scripts/base/paths.ts';
import { connectionCostSchema } from '../scripts/wire/connection-cost.ts';
import { hasChromium, chromiumNote, openSignedIn, stageWithDoubles, type Browser, type Course, type Stage } from './harness.ts';

const LAB = 'scale-compare';
const NS = 'lab-scale-compare';
const MODE = 'iptables';
const PAGE = `/labs/${LAB}/`;
const NODES = ['dplab-iptables-control-plane', 'dplab-iptables-worker', 'dplab-iptables-worker2'];
const CHART = 'dplab-lab [data-scale-chart]';
const RECORDED = 'dplab-lab [data-recorded-cost]';
const recording = connectionCostSchema.parse(JSON.parse(readFileSync(join(labsDir, LAB, 'recorded', 'connection-cost.json'), 'utf8')));
const step = (id: string) => `dplab-lab .dplab-step[data-step="${id}"]`;

/** Two earlier clusters, two points each, as the page stores them. */
const SEEDED: Measurement[] = [
  { mode: 'ipvs', services: 0, entries: 4, entriesLabel: 'IPVS virtual servers in /proc/net/ip_vs', syncMsAvg: 7.9, syncMsP90: 16 },
  { mode: 'ipvs', services: 1000, entries: 1004, entriesLabel: 'IPVS virtual servers in /proc/net/ip_vs', syncMsAvg: 41.3, syncMsP90: 128 },
  { mode: 'cilium', services: 0, entries: 4, entriesLabel: 'frontends in `cilium-dbg service list`' },
  { mode: 'cilium', services: 1000, entries: 1004, entriesLabel: 'frontends in `cilium-dbg service list`' },
];

const observed = (stepId: string) => recordedObservations(LAB, stepId, 'solved', MODE);

/** The iptables cluster as the solved observations describe it; state n=100 once the learner made 100 Services. */
function scaleScenario(): Scenario {
  const base = observed('baseline');
  const hundred = observed('hundred');
  const names = Array.from({ length: 100 }, (_, i) => `service/scale-${i + 1}`).join('\n');
  return {
    rules: [
      { tool: 'kind', match: `^get nodes --name dplab-${MODE}$`, stdout: `${NODES.join('\n')}\n` },
      // A machine with Docker running: no cluster is kept from starting.
      { tool: 'docker', match: '^info ', stdout: DOCKER_INFO },
      { tool: 'docker', match: `^exec dplab-${MODE}-worker sh -c iptables-save`, when: { n: '100' }, stdout: hundred.scale.count.stdout },
      { tool: 'docker', match: `^exec dplab-${MODE}-worker sh -c iptables-save`, stdout: base.scale.count.stdout },
      {
        tool: 'docker',
        match: `^exec dplab-${MODE}-worker curl .*/metrics$`,
        when: { n: '100' },
        stdout: `${hundred.scale.syncMetrics}\n`,
      },
      { tool: 'docker', match: `^exec dplab-${MODE}-worker curl .*/metrics$`, stdout: `${base.scale.syncMetrics}\n` },
      { tool: 'kubectl', match: `get configmaps -n ${NS} `, stdout: JSON.stringify(base.answer.configmaps) },
      { tool: 'kubectl', match: `get services -n ${NS} -l dplab-scale=yes -o name$`, when: { n: '100' }, stdout: `${names}\n` },
      { tool: 'kubectl', match: `get services -n ${NS} -l dplab-scale=yes -o name$`, stdout: '' },
    ] satisfies Rule[],
  };
}

describe.skipIf(!hasChromium)(`scale-compare chart in the browser${chromiumNote}`, { timeout: 60_000 }, () => {
  let stage: Stage;
  let course: Course;
  let browser: Browser;
  let doubles: Doubles;

  beforeAll(async () => {
    stage = await stageWithDoubles(scaleScenario(), { clusterOf: MODE });
    ({ course, browser, doubles } = stage);
    await openSignedIn(browser.page, course, PAGE);
  });
  afterAll(async () => {
    await stage?.close();
  });

  const seriesModes = () =>
    browser.page
      .locator(`${CHART} svg.dplab-scale-entries g.dplab-chart-series`)
      .evaluateAll((gs) => gs.map((g) => g.getAttribute('data-mode')));
  const tableRows = () => browser.page.locator(`${CHART} table.dplab-chart-table tbody tr`).allTextContents();
  /** Each mode's rows as text, its header (mode, what is counted) first. */
  const tableOf = (mode: string) =>
    browser.page
      .locator(`${CHART} table.dplab-chart-table tbody[data-mode="${mode}"] tr`)
      .evaluateAll((rows) => rows.map((r) => [...(r as HTMLTableRowElement).cells].map((c) => c.textContent).join(' | ')));

  it('the recorded connection cost is on the page: every point in the table, a series per recorded mode, the rest "not recorded yet"', async () => {
    const { page } = browser;
    const n = (v: number) => v.toLocaleString('en-US');
    const label = await page.locator(`${RECORDED} .dplab-recorded-label`).textContent();
    const recorded = recording.modes.filter((m) => m.recorded);
    if (recorded.length) expect(label).toMatch(/^\s*Recorded on real kind clusters here on \d+ \w+ \d{4}, /);
    for (const m of recording.modes) {
      const rows = await page
        .locator(`${RECORDED} table tbody[data-mode="${m.mode}"] tr`)
        .evaluateAll((trs) =>
          trs.map((r) => [...(r as HTMLTableRowElement).cells].map((c) => c.textContent?.replace(/\u00a0/g, ' ').trim()).join(' | ')),
        );
      expect(rows[0]).toMatch(new RegExp(`^${m.mode}`));
      if (!m.recorded) expect(rows.slice(1)).toEqual([m.note]);
      else
        expect(rows.slice(1)).toEqual([
          ...m.points.map(
            (p) =>
              `${n(p.services)} | ${n(p.entries)} | ${n(p.medianUs)} µs | ${n(p.p90Us)} µs | ${p.ahead === undefined ? '—' : n(p.ahead)}`,
          ),
          // Why a mode stopped short of the largest size, under its points.
          ...(m.note ? [m.note] : []),
        ]);
    }
    if (!recorded.length) return;
    const svg = `${RECORDED} svg.dplab-recorded-connect`;
    await page.locator(svg).waitFor();
    expect(await page.locator(`${svg} g.dplab-chart-series`).evaluateAll((gs) => gs.map((g) => g.getAttribute('data-mode')))).toEqual(
      recorded.map((m) => m.mode),
    );
    for (const m of recorded) expect(await page.locator(`${svg} g[data-mode="${m.mode}"] circle`).count()).toBe(m.points.length);
    expect(await page.locator(`${RECORDED} svg.dplab-recorded-entries g.dplab-chart-series`).count()).toBe(recorded.length);
    expect(await page.locator(svg).getAttribute('role')).toBe('img');
    if (process.env.DPLAB_SCREENSHOT)
      await page.locator(RECORDED).screenshot({ path: process.env.DPLAB_SCREENSHOT.replace(/\.png$/, '-recorded.png') });
  });

  it('before any measurement the section says how to fill it', async () => {
    expect(await browser.page.locator(`${CHART} .dplab-chart-empty`).textContent()).toContain('No measurements yet');
  });

  it('measurements from two earlier clusters are drawn after a reload: two series, every number in the table', async () => {
    const { page } = browser;
    await page.evaluate(([k, v]) => localStorage.setItem(k, v), [`dplab:measurements:${LAB}`, JSON.stringify(SEEDED)]);
    await page.reload();
    await page.locator(`${CHART} svg.dplab-scale-entries`).waitFor();
    expect(await seriesModes()).toEqual(['ipvs', 'cilium']);
    expect(await page.locator(`${CHART} svg.dplab-scale-entries g[data-mode="ipvs"] circle`).count()).toBe(2);
    // Cilium has no kube-proxy: the sync-time chart has only ipvs.
    expect(
      await page
        .locator(`${CHART} svg.dplab-scale-sync g.dplab-chart-series`)
        .evaluateAll((gs) => gs.map((g) => g.getAttribute('data-mode'))),
    ).toEqual(['ipvs']);
    const rows = await tableRows();
    expect(rows).toHaveLength(4);
    expect(await tableOf('ipvs')).toEqual([
      'ipvsIPVS virtual servers in /proc/net/ip_vs | 0 | 4 | 7.9 ms | ≤ 16 ms',
      '1,000 | 1,004 | 41.3 ms | ≤ 128 ms',
    ]);
    expect(await tableOf('cilium')).toEqual([
      'ciliumfrontends in cilium-dbg service list | 0 | 4 | no kube-proxy | n/a',
      '1,000 | 1,004 | no kube-proxy | n/a',
    ]);
    expect(await page.locator(`${CHART} svg.dplab-scale-entries`).getAttribute('role')).toBe('img');
  });

  it("a Check's figures add this cluster's points (baseline, then 100 Services) and survive a reload", async () => {
    const { page } = browser;
    await page.locator(`${step('baseline')} [data-action="check"]`).click();
    await page.locator(`${step('baseline')} .dplab-result[data-status="pass"]`).waitFor({ timeout: 30_000 });
    doubles.setState({ n: '100' });
    await page.locator(`${step('hundred')} [data-action="check"]`).click();
    await page.locator(`${step('hundred')} .dplab-result[data-status="pass"]`).waitFor({ timeout: 30_000 });
    expect(await seriesModes()).toEqual(['iptables', 'ipvs', 'cilium']);
    expect(await page.locator(`${CHART} svg.dplab-scale-entries g[data-mode="iptables"] circle`).count()).toBe(2);
    // Figures straight from the lab's solved observations (the doubles replay them).
    const base = scaleFigures(observed('baseline').scale, MODE, 0)!;
    const hundred = scaleFigures(observed('hundred').scale, MODE, 100)!;
    const n = (v: number) => v.toLocaleString('en-US');
    expect(await tableOf('iptables')).toEqual([
      expect.stringMatching(
        new RegExp(`^iptablesKUBE-\\* rules in iptables-save \\| 0 \\| ${n(base.entries.value)} \\| [\\d.]+ ms \\| ≤ \\d+ ms$`),
      ),
      `100 | ${n(hundred.entries.value)} | ${hundred.syncMsAvg.value} ms | ≤ ${hundred.syncMsP90.value} ms`,
    ]);

    await page.reload();
    await page.locator(`${CHART} svg.dplab-scale-entries`).waitFor();
    expect(await seriesModes()).toEqual(['iptables', 'ipvs', 'cilium']);
    expect(await tableRows()).toHaveLength(6);
    if (process.env.DPLAB_SCREENSHOT) await page.locator(CHART).screenshot({ path: process.env.DPLAB_SCREENSHOT });
  });
});
