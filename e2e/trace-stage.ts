/**
 * What the trace view's browser tests share: the runner's doubles replaying the captured iptables
 * and nftables traces beside an IPVS cluster the explorer reads, and the steps a person takes on
 * the explorer (show a mode's live read, trace, read the marked boxes).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import type { Rule } from '../test/fixtures/doubles.ts';
import { traceRules, type TraceScenario } from '../test/fixtures/trace-scenario.ts';
import { firstServiceScenario } from '../test/fixtures/first-service-scenario.ts';
import { DOCKER_INFO } from '../test/fixtures/cluster-scenarios.ts';

const FIX = join(import.meta.dirname, '..', 'scripts', 'dataplane', 'fixtures');

/** An IPVS cluster the explorer can read (no trace method): its nodes and /proc/net/ip_vs. */
const IPVS: Rule[] = [
  { tool: 'kind', match: '^get nodes --name dplab-ipvs$', stdout: 'dplab-ipvs-control-plane\ndplab-ipvs-worker\n' },
  {
    tool: 'docker',
    match: '^exec (-i )?dplab-ipvs-worker cat /proc/net/ip_vs$',
    stdout: readFileSync(join(FIX, 'proc-ip-vs', 'clusterip.txt'), 'utf8'),
  },
];

export const rules = (opts: TraceScenario = {}): Rule[] => [
  ...traceRules('iptables', opts),
  ...traceRules('nftables', opts),
  ...IPVS,
  { tool: 'docker', match: '^info ', stdout: DOCKER_INFO },
  ...firstServiceScenario('iptables').rules,
];

/** The box texts of the diagram's nodes carrying `cls` (mermaid puts classDef classes on the node's <g>). */
export function boxesWith(column: Locator, cls: string): Promise<string[]> {
  return column
    .locator(`.dp-diagram svg g.node.${cls}`)
    .evaluateAll((gs) => gs.map((g) => (g.textContent ?? '').replace(/\s+/g, ' ').trim()));
}

/** Shows `mode`'s live read of default/web in the first column, and waits for its diagram. */
export async function showLive(page: Page, mode: string): Promise<Locator> {
  // The panel loads once on screen (site/client/when-shown.ts): below the fold on a phone.
  await page.locator('dplab-dataplane').scrollIntoViewIfNeeded();
  const column = page.locator('dplab-dataplane .dp-column').first();
  await column.locator(`select.dp-source option[value="live:${mode}"]`).waitFor({ state: 'attached', timeout: 20_000 });
  await column.locator('select.dp-source').selectOption(`live:${mode}`);
  await column.getByRole('button', { name: 'Refresh' }).click();
  await expect.poll(() => column.locator('.dp-summary').textContent(), { timeout: 20_000 }).toContain(`(${mode} cluster)`);
  await column.locator('.dp-diagram[data-rendered] svg').waitFor({ timeout: 30_000 });
  return column;
}

export async function trace(column: Locator, count?: number): Promise<void> {
  const section = column.locator('.dp-trace');
  if (count !== undefined) await section.getByLabel(/Requests/).fill(String(count));
  await section.getByRole('button', { name: 'Trace' }).click();
  await expect.poll(() => section.getAttribute('data-state'), { timeout: 60_000 }).toMatch(/^(ok|error)$/);
}

/** `#rrggbb` as the browser's computed colour. */
export function rgb(hex: string): string {
  const n = parseInt(hex.slice(1), 16);
  return `rgb(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255})`;
}
