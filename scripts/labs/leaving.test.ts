/**
 * A lab leaves no trace on the next: what a lab changes outside its namespace is put back when
 * the learner opens another lab on that cluster (or resets one), and when `verify-labs` is done
 * with the lab. One test per such change, on the cluster test doubles (test/fixtures/bin), whose
 * scenario remembers the change (test/fixtures/lab-traces-scenario.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyEnv, useDoubles, type Doubles } from '../../test/fixtures/doubles.ts';
import { labTracesScenario, TRACES } from '../../test/fixtures/lab-traces-scenario.ts';
import { kubeconfigPath, type Mode } from '../catalogue/modes.ts';
import { verifyLabs } from './harness.ts';
import { lastLabOn } from './leaving.ts';
import { requireLab } from './registry.ts';
import { resetLab } from './reset.ts';
import { ensureLabSetup } from './setup.ts';

let doubles: Doubles;
let restoreEnv: () => void;

beforeEach(() => {
  doubles = useDoubles(labTracesScenario());
  restoreEnv = applyEnv(doubles.env);
  for (const mode of ['ipvs', 'iptables'] as Mode[]) {
    mkdirSync(dirname(kubeconfigPath(mode)), { recursive: true });
    writeFileSync(kubeconfigPath(mode), 'apiVersion: v1\nkind: Config\n');
  }
});
afterEach(() => {
  restoreEnv?.();
  doubles?.cleanup();
});

const lines = () => doubles.commandLines();
const restartedKubeProxy = () => lines().filter((l) => /rollout restart daemonset kube-proxy/.test(l));

describe('leaving a lab puts back what it changed outside its namespace', { timeout: 60_000 }, () => {
  it("ipvs-inspect's lc scheduler: opening session-affinity sets it back to the default and restarts kube-proxy", async () => {
    await ensureLabSetup(requireLab('ipvs-inspect'), 'ipvs');
    expect(lastLabOn('ipvs')).toBe('ipvs-inspect');
    doubles.setState({ sched: TRACES.sched }); // the learner switched to lc and left
    const r = await ensureLabSetup(requireLab('session-affinity'), 'ipvs');
    expect(r.restored).toContain("ipvs-inspect: kube-proxy's IPVS scheduler set back from lc to the default (rr), kube-proxy restarted");
    expect(doubles.state()).toMatchObject({ sched: '', restarted: '1' });
    const applied = doubles.calls().find((c) => c.tool === 'kubectl' && c.argv.join(' ').endsWith('apply -f -'));
    expect(applied?.stdin).toContain('scheduler: \\"\\"');
    // Put back before the new lab's namespace is made.
    expect(lines().findIndex((l) => /rollout restart/.test(l))).toBeLessThan(
      lines().findIndex((l) => /create namespace lab-session-affinity/.test(l)),
    );
    expect(lastLabOn('ipvs')).toBe('session-affinity');
  });

  it("ipvs-inspect's ipvsadm: opening another lab on the IPVS cluster removes it from the node it was installed in", async () => {
    await ensureLabSetup(requireLab('ipvs-inspect'), 'ipvs');
    doubles.setState({ pkg: TRACES.pkg });
    const r = await ensureLabSetup(requireLab('first-service'), 'ipvs');
    expect(r.restored).toContain('ipvs-inspect: removed ipvsadm from dplab-ipvs-worker');
    expect(doubles.state().pkg).toBe('0');
    expect(lines().filter((l) => /^docker exec dplab-ipvs-\S+ sh -c if dpkg -s ipvsadm/.test(l))).toHaveLength(3);
  });

  it("etp-local's node label: opening first-service on the iptables cluster removes it", async () => {
    await ensureLabSetup(requireLab('etp-local'), 'iptables');
    doubles.setState({ label: TRACES.label });
    const r = await ensureLabSetup(requireLab('first-service'), 'iptables');
    expect(r.restored).toEqual(['etp-local: removed label dplab-web from dplab-iptables-worker']);
    expect(lines()).toContain(`kubectl --kubeconfig ${kubeconfigPath('iptables')} label nodes dplab-iptables-worker dplab-web-`);
  });

  it('resetting another lab puts them back too', async () => {
    await ensureLabSetup(requireLab('ipvs-inspect'), 'ipvs');
    doubles.setState({ sched: TRACES.sched, pkg: TRACES.pkg });
    const r = await resetLab(requireLab('session-affinity'), 'ipvs');
    expect(r.restored).toEqual([
      'ipvs-inspect: removed ipvsadm from dplab-ipvs-worker',
      "ipvs-inspect: kube-proxy's IPVS scheduler set back from lc to the default (rr), kube-proxy restarted",
    ]);
  });

  it('re-opening the same lab (a reload, a second tab) keeps the learner’s change', async () => {
    await ensureLabSetup(requireLab('ipvs-inspect'), 'ipvs');
    doubles.setState({ sched: TRACES.sched, pkg: TRACES.pkg });
    const r = await ensureLabSetup(requireLab('ipvs-inspect'), 'ipvs');
    expect(r.restored).toBeUndefined();
    expect(restartedKubeProxy()).toEqual([]);
    expect(doubles.state()).toMatchObject({ sched: 'lc', pkg: '1' });
  });

  it('a restorer that cannot reach the cluster is reported, and the lab it was leaving for is set up all the same', async () => {
    await ensureLabSetup(requireLab('etp-local'), 'iptables');
    doubles.setState({ label: TRACES.label });
    // The scenario stops answering the restorer's read: kubectl exits 97, as a vanished API server would fail it.
    doubles.setScenario({ rules: labTracesScenario().rules.filter((r) => !String(r.match).includes('-l dplab-web')) });
    const r = await ensureLabSetup(requireLab('first-service'), 'iptables');
    expect(r.restored).toEqual([expect.stringMatching(/^etp-local: could not put back what it changed \(.*get nodes -l dplab-web/)]);
    expect(lines()).toEqual(expect.arrayContaining([expect.stringMatching(/create namespace lab-first-service/)]));
    expect(lastLabOn('iptables')).toBe('first-service');
  });

  it('a lab on another cluster is not touched: leaving ipvs-inspect for an iptables lab leaves the IPVS cluster alone', async () => {
    await ensureLabSetup(requireLab('ipvs-inspect'), 'ipvs');
    doubles.setState({ sched: TRACES.sched });
    await ensureLabSetup(requireLab('first-service'), 'iptables');
    expect(restartedKubeProxy()).toEqual([]);
    expect(lastLabOn('ipvs')).toBe('ipvs-inspect');
  });
});

describe('verify-labs puts back what a lab changed before the next lab', { timeout: 120_000 }, () => {
  /** The lab's steps (as the learner would) leave their traces once its setup is through. */
  function tracesAfterSetupOf(lab: string, traces: Record<string, string>) {
    const s = labTracesScenario();
    s.rules.unshift({
      tool: 'kubectl',
      match: `label namespace lab-${lab} dplab\\.io/setup=${lab}`,
      stdout: 'namespace labeled\n',
      set: traces,
    });
    doubles.setScenario(s);
  }

  it('ipvs-inspect: the scheduler back to rr, kube-proxy restarted, ipvsadm removed, once the lab is done', async () => {
    tracesAfterSetupOf('ipvs-inspect', { sched: TRACES.sched, pkg: TRACES.pkg });
    const log: string[] = [];
    await verifyLabs([requireLab('ipvs-inspect')], { modes: ['ipvs'], settleMs: 0, log: (l) => log.push(l) });
    expect(doubles.state()).toMatchObject({ sched: '', restarted: '1', pkg: '0' });
    expect(log).toContain("ipvs-inspect on ipvs: kube-proxy's IPVS scheduler set back from lc to the default (rr), kube-proxy restarted");
    expect(log).toContain('ipvs-inspect on ipvs: removed ipvsadm from dplab-ipvs-worker');
    const setupDone = lines().findIndex((l) => /label namespace lab-ipvs-inspect dplab\.io\/setup=/.test(l));
    expect(lines().findIndex((l) => /rollout restart/.test(l))).toBeGreaterThan(setupDone);
  });

  it('etp-local: the node label removed once the lab is done', async () => {
    tracesAfterSetupOf('etp-local', { label: TRACES.label });
    await verifyLabs([requireLab('etp-local')], { modes: ['iptables'], settleMs: 0 });
    expect(doubles.state().label).toBe('0');
    expect(lines()).toContain(`kubectl --kubeconfig ${kubeconfigPath('iptables')} label nodes dplab-iptables-worker dplab-web-`);
  });
});
