/**
 * The replay API through the real runner (security gate included): unknown ids are refused with
 * the known ones listed, a replay's results are the step's own evaluate on its recordings, and
 * the blocker names Docker when the doubles play its daemon down.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { kubeconfigPath } from '../../catalogue/modes.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { projectRoot } from '../../base/paths.ts';
import { stepReplaySchema, clusterBlockerSchema } from '../../wire/replay.ts';
import { findObservationFiles, readObservationFile } from '../../labs/observations.ts';
import { requireLab } from '../../labs/registry.ts';
import { solutionFor } from '../../labs/schema.ts';
import { applyEnv, useDoubles, type Doubles } from '../../../test/fixtures/doubles.ts';
import { daemonDownRules, scenario } from '../../../test/fixtures/cluster-scenarios.ts';
import { serveRunner, type TestRunner } from '../../../test/fixtures/runner-http.ts';

let runner: TestRunner | undefined;
let doubles: Doubles | undefined;
let restore: (() => void) | undefined;
afterEach(async () => {
  await runner?.close();
  restore?.();
  doubles?.cleanup();
  runner = doubles = restore = undefined;
});

async function start(): Promise<TestRunner> {
  runner = await serveRunner({});
  return runner;
}

describe('GET /api/labs/:lab/steps/:step/replay', { timeout: 30_000 }, () => {
  it('refuses unknown labs, steps and modes with a 404 naming the known ones', async () => {
    const r = await start();
    const lab = await r.call('GET', '/api/labs/no-such-lab/steps/deploy-web/replay?mode=iptables');
    expect(lab.status).toBe(404);
    expect(lab.json.error.message).toContain('first-service');
    const step = await r.call('GET', '/api/labs/first-service/steps/..%2F..%2Fetc/replay?mode=iptables');
    expect(step.status).toBe(404);
    expect(step.json.error.message).toContain('deploy-web');
    const mode = await r.call('GET', '/api/labs/etp-local/steps/pin-web/replay?mode=ipvs');
    expect(mode.status).toBe(404);
    expect(mode.json.error.message).toContain('iptables');
  });

  const cases = (['first-service', 'etp-local'] as const).flatMap((id) =>
    requireLab(id).steps.flatMap((s) => requireLab(id).modes.map((m) => [id, s.id, m] as const)),
  );
  it.each(cases)('%s/%s on %s: the results are evaluate on the recordings', async (labId, stepId, mode) => {
    runner ??= await serveRunner({});
    const res = await runner.call('GET', `/api/labs/${labId}/steps/${stepId}/replay?mode=${mode}`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const replay = stepReplaySchema.parse(res.json);
    const lab = requireLab(labId);
    const step = lab.steps.find((s) => s.id === stepId)!;
    expect(replay.commands).toEqual(solutionFor(step, mode));
    for (const state of ['unsolved', 'solved'] as const) {
      const path = findObservationFiles(labId, stepId, state, mode)[0]!;
      const file = readObservationFile(path, relative(projectRoot, path), step.check.observations);
      expect(file.source.kind).toBe('recorded');
      const verdict = step.check.evaluate(file.observations, { mode, namespace: lab.namespace });
      expect(replay[state]).toMatchObject({ status: verdict.status, message: verdict.message, facts: verdict.facts });
      expect(replay[state].status).toBe(state === 'solved' ? 'pass' : 'fail');
      // The label says where it was recorded: kind's version and the kernel, or the sim.
      const source = file.source as { provider: string; kubernetesVersion: string };
      expect(replay[state].source.provider).toBe(source.provider);
      expect(replay[state].source.label).toContain(`Kubernetes ${source.kubernetesVersion}`);
      if (source.provider === 'kind') expect(replay[state].source.label).toMatch(/^kind v\d+\.\d+\.\d+ · .* · kernel \S+ · /);
    }
  });

  it("keeps what the cluster printed: the client pod's answers from the web pods", async () => {
    const r = await start();
    const replay = stepReplaySchema.parse((await r.call('GET', '/api/labs/first-service/steps/reach-web/replay?mode=iptables')).json);
    const path = findObservationFiles('first-service', 'reach-web', 'solved', 'iptables')[0]!;
    const recorded = readObservationFile<{ client: { result: { stdout: string } } }>(path).observations.client.result.stdout;
    expect(replay.outputs).toEqual([{ label: 'Output kept as `client.result`', text: recorded.trimEnd(), omittedLines: 0 }]);
    expect(replay.outputs[0]!.text).toMatch(/^web-\S+$/m);
  });
});

describe('GET /api/clusters/:mode/blocker', { timeout: 30_000 }, () => {
  it('names Docker, with its fix, when its daemon is down', async () => {
    doubles = useDoubles(scenario('iptables', daemonDownRules()));
    restore = applyEnv(doubles.env);
    const r = await start();
    const res = await r.call('GET', '/api/clusters/iptables/blocker');
    expect(res.status).toBe(200);
    const { blocker } = clusterBlockerSchema.parse(res.json);
    expect(blocker?.message).toMatch(/Docker is not running/);
    expect(blocker?.fix).toMatch(/Start Docker|systemctl start docker/);
    // The cluster status says the same, so a lab page knows with the status it already reads.
    const status = await r.call('GET', '/api/clusters/iptables');
    expect(status.json).toMatchObject({ state: 'absent', blocked: true, error: { message: blocker?.message } });
  });

  it('is null on a machine that can start clusters', async () => {
    doubles = useDoubles(scenario('iptables'));
    restore = applyEnv(doubles.env);
    const r = await start();
    expect((await r.call('GET', '/api/clusters/iptables/blocker')).json).toEqual({ mode: 'iptables', blocker: null });
    expect((await r.call('GET', '/api/clusters/iptables')).json.blocked).toBeUndefined();
  });

  it('is null for a cluster that exists: its checks say what is wrong with it', async () => {
    doubles = useDoubles(scenario('iptables', daemonDownRules()));
    restore = applyEnv(doubles.env);
    mkdirSync(dirname(kubeconfigPath('iptables')), { recursive: true });
    writeFileSync(kubeconfigPath('iptables'), 'apiVersion: v1\nkind: Config\n');
    const r = await start();
    expect((await r.call('GET', '/api/clusters/iptables/blocker')).json).toEqual({ mode: 'iptables', blocker: null });
    expect(clusterBlockerSchema.parse((await r.call('GET', '/api/clusters/nftables/blocker')).json).blocker).not.toBeNull();
  });

  it('refuses an unknown mode', async () => {
    const r = await start();
    const res = await r.call('GET', '/api/clusters/bogus/blocker');
    expect(res.status).toBe(404);
  });
});
