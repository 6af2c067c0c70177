/**
 * One mode on a real kind cluster, as the live and kind tiers both run it: bring the cluster up
 * through the product's own provider, check the dataplane it reports, and run every lab's
 * author contract on it (`verify-labs`: setup → check fails → solve → check passes).
 */
import { expect } from 'vitest';
import { KPR_TRUE } from '../../scripts/clusters/actions.ts';
import { kindOverlay } from '../../scripts/clusters/kind-overlay.ts';
import type { ClusterManager } from '../../scripts/clusters/manager.ts';
import { agentExec, modeRecord, type Mode } from '../../scripts/catalogue/modes.ts';
import { clusterHandle } from '../../scripts/clusters/providers.ts';
import { verifyLabs, type HarnessReport } from '../../scripts/labs/harness.ts';
import { loadLabs, requireLab } from '../../scripts/labs/registry.ts';
import { resetLab } from '../../scripts/labs/reset.ts';

export async function upAndCheckDataplane(manager: ClusterManager, mode: Mode, log: (l: string) => void): Promise<void> {
  const status = await manager.ensure(mode, { onEvent: (e) => e.type === 'action' && log(`${e.phase} ${e.title}`) });
  expect(status.state).toBe('ready');
  expect(status.nodes).toBe(3);
  const h = clusterHandle(mode);
  const nodes = await h.nodes();
  const d = modeRecord(mode).dataplane;
  if (d.kind === 'agent') {
    const r = await h.kubectl(agentExec(d.agent, d.agent.status));
    expect(r.stdout).toMatch(KPR_TRUE);
  } else {
    for (const node of nodes) expect(await h.proxyMode(node)).toBe(d.proxyMode);
  }
}

/** Steps whose solved check needs Cilium's L7 proxy (cilium-envoy). */
const NEEDS_L7_PROXY = ['cilium-l7-policy / l7-policy', 'cilium-l7-policy / hubble-drops'];

export async function labContract(mode: Mode, log: (l: string) => void): Promise<HarnessReport> {
  const report = await verifyLabs(loadLabs(), { modes: [mode], log });
  log(report.table);
  expect(report.rows.length).toBeGreaterThan(0);
  // Where Cilium runs without its L7 proxy (the kind test environment: cilium-envoy cannot be
  // built there), the steps that need it must fail their solved check, and nothing else may:
  // the day they pass, this says so.
  const noL7 = mode === 'cilium' && (kindOverlay()?.cilium?.values ?? []).includes('l7Proxy=false');
  const breaches = report.rows.filter((r) => r.breach);
  for (const r of breaches) log(`breach: ${r.lab} / ${r.step}: ${r.breach}`);
  expect(breaches.map((r) => `${r.lab} / ${r.step}`)).toEqual(noL7 ? NEEDS_L7_PROXY : []);
  if (!noL7) expect(breaches.map((r) => `${r.lab} / ${r.step}: ${r.breach}`)).toEqual([]);
  return report;
}

/**
 * Reset on a real cluster, after the lab contract left first-service solved: its namespace is
 * emptied in place (the same namespace, nothing a step made is left), and the lab's whole contract
 * passes again from there, its setup being a second in-place Reset. The doubles cannot show that
 * the API server takes the sweep's one delete, or that objects of the same names can be made
 * straight after it.
 */
export async function resetContract(mode: Mode, log: (l: string) => void): Promise<void> {
  const lab = requireLab('first-service');
  const cluster = clusterHandle(mode);
  const uid = async () => (await cluster.kubectl(['get', 'namespace', lab.namespace, '-o', 'jsonpath={.metadata.uid}'])).stdout.trim();
  const made = async () =>
    (await cluster.kubectl(['-n', lab.namespace, 'get', 'deployments,replicasets,services', '-o', 'name'])).stdout
      .split('\n')
      .filter(Boolean);
  const before = await uid();
  expect(before).not.toBe('');
  expect(await made()).not.toEqual([]);
  const reset = await resetLab(lab, mode);
  log(`Reset of ${lab.id} after its contract: ${reset.durationMs} ms`);
  expect(await uid()).toBe(before);
  expect(await made()).toEqual([]);
  const again = await verifyLabs([lab], { modes: [mode], log });
  log(again.table);
  expect(again.rows.filter((r) => r.breach).map((r) => `${r.step}: ${r.breach}`)).toEqual([]);
  expect(await uid()).toBe(before);
}
