/** The author harness against the cluster test doubles: call order, table, exit codes. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyEnv, useDoubles, type Doubles } from '../../test/fixtures/doubles.ts';
import { kubeconfigPath } from '../catalogue/modes.ts';
import { verifyLabs, TABLE_HEADER } from './harness.ts';
import { requireLab } from './registry.ts';
import { firstServiceScenario } from '../../test/fixtures/first-service-scenario.ts';
import { verifyLabsCommand } from '../commands/verify-labs.ts';
import { commandContext } from '../commands/command.ts';

let doubles: Doubles;
let restore: () => void;

function start(scenario = firstServiceScenario('iptables')) {
  doubles = useDoubles(scenario);
  restore = applyEnv(doubles.env);
  const kc = kubeconfigPath('iptables');
  mkdirSync(dirname(kc), { recursive: true });
  writeFileSync(kc, 'apiVersion: v1\nkind: Config\n');
}

afterEach(() => {
  restore?.();
  doubles?.cleanup();
});

describe('verify-labs harness', { timeout: 90_000 }, () => {
  beforeEach(() => start());

  it('runs setup once, then per step: check (fails) → solve → check (passes)', async () => {
    const report = await verifyLabs([requireLab('first-service')], { modes: ['iptables'] });
    expect(verifyLabsCommand.usage).toContain('--record');
    expect(report.rows.map((r) => [r.step, r.unsolved, r.solved, r.breach ?? ''])).toEqual([
      ['deploy-web', 'fail', 'pass', ''],
      ['expose-web', 'fail', 'pass', ''],
      ['reach-web', 'fail', 'pass', ''],
      ['proxy-mode', 'fail', 'pass', ''],
    ]);
    expect(report.ok).toBe(true);

    const lines = doubles.commandLines();
    const at = (re: RegExp, from = 0) => lines.findIndex((l, i) => i >= from && re.test(l));
    const setup = at(/create namespace lab-first-service/);
    expect(lines.filter((l) => /create namespace/.test(l))).toHaveLength(1);
    const firstCheck = at(/get deployments/);
    const solve = at(/apply -f first-service\/web-deployment\.yaml/);
    const secondCheck = at(/get deployments/, solve);
    expect(setup).toBeGreaterThanOrEqual(0);
    expect(setup).toBeLessThan(firstCheck);
    expect(firstCheck).toBeLessThan(solve);
    expect(solve).toBeLessThan(secondCheck);
    // Step 2 starts only after step 1 is solved and checked.
    expect(at(/get services/)).toBeGreaterThan(secondCheck);
    // The solution ran through bash with the lab cluster's kubeconfig, never ~/.kube/config.
    const applied = doubles.calls().find((c) => c.argv.includes('first-service/web-deployment.yaml'));
    expect(applied?.kubeconfig).toBe(kubeconfigPath('iptables'));

    expect(
      report.table
        .split('\n')[0]
        .split('|')
        .map((c) => c.trim()),
    ).toEqual(TABLE_HEADER);
    expect(report.table).toMatch(/first-service \| iptables \| deploy-web +\| fail ✓ +\| pass ✓ +\| \d+\.\d s/);
  });

  it('reports a breach when the check passes before the solution', async () => {
    doubles.setState({ s1: '1' });
    // setup resets the flags, so pretend the namespace delete does not clear step 1.
    const scenario = firstServiceScenario('iptables');
    scenario.rules[0] = { ...scenario.rules[0], set: { s2: '0', s3: '0', s4: '0' } };
    doubles.setScenario(scenario);
    const report = await verifyLabs([requireLab('first-service')], { modes: ['iptables'] });
    expect(report.ok).toBe(false);
    expect(report.rows[0]).toMatchObject({ step: 'deploy-web', unsolved: 'pass', breach: 'check passed before the solution was applied' });
    expect(report.table).toMatch(/deploy-web +\| pass ✗/);
  });

  it('reports a breach when the solution does not make the check pass, and the command exits 1', async () => {
    doubles.setScenario(firstServiceScenario('iptables', { breakSolution: 'deploy-web' }));
    const out: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    const errWrite = process.stderr.write.bind(process.stderr);
    process.stdout.write = ((s: string) => (out.push(String(s)), true)) as typeof process.stdout.write;
    process.stderr.write = (() => true) as typeof process.stderr.write;
    let code: number;
    try {
      code = await verifyLabsCommand.run(['--lab', 'first-service', '--mode', 'iptables'], commandContext());
    } finally {
      process.stdout.write = write;
      process.stderr.write = errWrite;
    }
    const text = out.join('');
    expect(code).toBe(1);
    expect(text).toMatch(/lab +\| mode +\| step +\| unsolved \| solved \| time/);
    expect(text).toMatch(/deploy-web +\| fail ✓ +\| fail ✗/);
    expect(text).toContain('✗ first-service / iptables / deploy-web: check did not pass after the solution: There is no Deployment `web`');
    expect(text).toMatch(/1 contract breach\./);
  });
});

describe('verify-labs without a cluster', () => {
  it('marks every step of the mode as not run, with the reason, and fails', async () => {
    doubles = useDoubles({ rules: [] });
    restore = applyEnv(doubles.env);
    const report = await verifyLabs([requireLab('first-service')], { modes: ['ipvs'] });
    expect(report.ok).toBe(false);
    expect(report.rows).toHaveLength(4);
    expect(report.rows[0].breach).toMatch(/^setup failed: The ipvs cluster is not running/);
    expect(doubles.calls()).toHaveLength(0);
  });
});
