/**
 * scale-compare's verdicts carry the measurement as figures (the lab page charts them): replayed
 * on the stored observations, every solved step says how many Services and entries it saw, and
 * kube-proxy's sync time on every mode that has a kube-proxy.
 */
import { describe, expect, it } from 'vitest';
import { kubeProxyMode } from '../../scripts/catalogue/modes.ts';
import { findObservationFile, readObservationFile } from '../../scripts/labs/observations.ts';
import { requireLab } from '../../scripts/labs/registry.ts';

const lab = requireLab('scale-compare');
const SERVICES: Record<string, number> = { baseline: 0, hundred: 100, thousand: 1000, cleanup: 0 };
const replay = (step: string, state: 'solved' | 'unsolved', mode: (typeof lab.modes)[number]) => {
  const check = lab.steps.find((s) => s.id === step)!.check;
  return check.evaluate(readObservationFile(findObservationFile(lab.id, step, state, mode)!, undefined, check.observations).observations, {
    mode,
    namespace: lab.namespace,
  });
};

describe('scale-compare figures', () => {
  const cases = lab.steps.flatMap((step) => lab.modes.map((mode) => [step.id, mode] as const));
  it.each(cases)('%s on %s, solved', (step, mode) => {
    const { figures, message } = replay(step, 'solved', mode);
    expect(figures?.services.value).toBe(SERVICES[step]);
    expect(figures?.entries.value).toBeGreaterThan(0);
    // The message quotes the count after the arrow (growth steps) or as the baseline: the same number.
    expect(message).toContain(String(figures?.entries.value));
    expect(figures?.entries.label).toMatch(/rules|lines|Service addresses|frontends/);
    if (kubeProxyMode(mode)) expect(figures?.syncMsAvg.value).toBeGreaterThan(0);
    else expect(figures?.syncMsAvg).toBeUndefined();
  });

  it('a growth step that fails with a readable count still reports the point it measured', () => {
    const v = replay('hundred', 'unsolved', 'iptables');
    expect(v.status).toBe('fail');
    expect(v.figures?.services.value).toBe(0);
    // The KUBE-* rules the recording counted before the step (the earlier labs' Services included).
    const recorded = readObservationFile(findObservationFile(lab.id, 'hundred', 'unsolved', 'iptables')!).observations as {
      scale: { count: { stdout: string } };
    };
    expect(v.figures?.entries).toEqual({ value: Number(recorded.scale.count.stdout.trim()), label: 'KUBE-* rules in iptables-save' });
  });

  it('an unsolved baseline carries no figures: that step does not know how many Services exist', () => {
    for (const mode of lab.modes) expect(replay('baseline', 'unsolved', mode).figures).toBeUndefined();
  });
});

describe('scale-compare clean-up', () => {
  it('Services deleted but the stale chains not yet removed (large cluster mode): not done yet, and the check keeps waiting', () => {
    const step = lab.steps.find((s) => s.id === 'cleanup')!;
    const file = readObservationFile(findObservationFile(lab.id, 'cleanup', 'solved', 'iptables')!);
    const obs = structuredClone(file.observations) as { scale: { count: { stdout: string } } };
    // 11,000 rules over the count the recording saw once the Services were gone.
    obs.scale.count.stdout = `${Number(obs.scale.count.stdout.trim()) + 11000}\n`;
    const v = step.check.evaluate(obs, { mode: 'iptables', namespace: lab.namespace });
    expect(v).toMatchObject({ status: 'fail', pending: true, message: expect.stringMatching(/still has 11000 entries over the baseline/) });
  });
});
