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
const SERVICES: Record<string, number> = { baseline: 0, hundred: 100, thousand: 1000, connect: 1000, cleanup: 0 };
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
    if (step === 'connect') {
      // The connection step quotes the median it timed itself; on iptables, the rules ahead too.
      expect(message).toContain(`takes ${figures?.connectUs.value.toLocaleString('en')} µs`);
      expect(figures?.connectP90Us.value).toBeGreaterThanOrEqual(figures!.connectUs.value);
      if (mode === 'iptables')
        expect(message).toContain(`with ${figures?.connectAhead.value.toLocaleString('en')} KUBE-SERVICES rules ahead`);
      else expect(figures?.connectAhead).toBeUndefined();
    } else {
      // The message quotes the count after the arrow (growth steps) or as the baseline: the same number.
      expect(message).toContain(String(figures?.entries.value));
    }
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

describe('scale-compare connection step', () => {
  const step = lab.steps.find((s) => s.id === 'connect')!;
  type Obs = {
    answer: { configmaps: { items: { data: Record<string, string> }[] } };
    services: number;
    connect: { run: { stdout: string; stderr: string; exitCode: number } };
  };
  // The IPVS file is hand-written (its timing a placeholder of 100 µs per connect): the check's logic, not a measurement.
  const base = () => structuredClone(readObservationFile(findObservationFile(lab.id, 'connect', 'solved', 'ipvs')!).observations) as Obs;
  const evaluate = (obs: Obs) => step.check.evaluate(obs, { mode: 'ipvs', namespace: lab.namespace });

  it('passes with a median near the one the check timed, and charts the check’s own', () => {
    const v = evaluate(base());
    expect(v.status).toBe('pass');
    expect(v.figures).toMatchObject({ services: { value: 1000 }, connectUs: { value: 100 }, connectP90Us: { value: 100 } });
  });

  it('a median far from what the check timed is sent back to be timed again', () => {
    const obs = base();
    obs.answer.configmaps.items[0].data.medianUs = '5000';
    expect(evaluate(obs)).toMatchObject({
      status: 'fail',
      message: expect.stringMatching(/^Your median 5,000 µs is far from the 100 µs the check measured/),
    });
    obs.answer.configmaps.items[0].data.medianUs = '390';
    expect(evaluate(obs).status).toBe('pass'); // within 4 × 100 µs + 300 µs of slack
  });

  it('a median that is not a number, too few Services, or a timing that failed each say so', () => {
    const words = base();
    words.answer.configmaps.items[0].data.medianUs = 'fast';
    expect(evaluate(words).message).toBe('The median must be a plain number of microseconds; ConfigMap `connect` says "fast".');
    const few = base();
    few.services = 100;
    expect(evaluate(few).message).toMatch(/^100 generated Services exist; time the connections at 1000/);
    const broken = base();
    broken.connect.run = { exitCode: 3, stdout: '', stderr: 'error no ClusterIP rule of lab-scale-compare in KUBE-SERVICES\n' };
    const v = evaluate(broken);
    expect(v).toMatchObject({
      status: 'fail',
      message: 'Could not time connections on dplab-ipvs-worker: error no ClusterIP rule of lab-scale-compare in KUBE-SERVICES.',
    });
    // The count is still a point on the chart; there is no connection figure to add.
    expect(v.figures?.connectUs).toBeUndefined();
    expect(v.figures?.entries.value).toBeGreaterThan(0);
  });
});
