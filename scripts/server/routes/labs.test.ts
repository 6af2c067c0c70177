/**
 * The lab API through the real runner (security gate included), with the cluster test doubles
 * on PATH: unknown ids, a check with no cluster, a check that times out, a fail, progress.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { applyEnv, useDoubles, type Doubles } from '../../../test/fixtures/doubles.ts';
import { kubeconfigPath } from '../../catalogue/modes.ts';
import { firstServiceScenario } from '../../../test/fixtures/first-service-scenario.ts';
import { startServer, type RunningServer } from '../http.ts';

const TOKEN = 'labs-api-test-token-0123456789';
let server: RunningServer;
let origin: string;
let siteDir: string;
let doubles: Doubles | undefined;
let restore: (() => void) | undefined;

function api(method: string, path: string, body?: unknown) {
  return fetch(`${origin}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, origin, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));
}

function withCluster(scenario = firstServiceScenario('iptables'), extraEnv: Record<string, string> = {}) {
  doubles = useDoubles(scenario);
  restore = applyEnv({ ...doubles.env, ...extraEnv });
  const kc = kubeconfigPath('iptables');
  mkdirSync(dirname(kc), { recursive: true });
  writeFileSync(kc, 'apiVersion: v1\nkind: Config\n');
}

beforeAll(async () => {
  siteDir = mkdtempSync(join(tmpdir(), 'dplab-site-'));
  server = await startServer({ port: 0, portExplicit: true, token: TOKEN, siteDir });
  origin = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server.close();
  rmSync(siteDir, { recursive: true, force: true });
});
afterEach(() => {
  restore?.();
  doubles?.cleanup();
  restore = undefined;
  doubles = undefined;
});

describe('lab API', { timeout: 30_000 }, () => {
  it('lists labs and returns one lab as data, without its check code', async () => {
    const list = await api('GET', '/api/labs');
    expect(list.status).toBe(200);
    expect(list.json.labs[0]).toMatchObject({
      id: 'first-service',
      modes: ['iptables', 'ipvs', 'nftables', 'cilium'],
      concepts: ['S2', 'S3'],
    });
    const one = await api('GET', '/api/labs/first-service');
    expect(one.json.steps.map((s: any) => s.id)).toEqual(['deploy-web', 'expose-web', 'reach-web', 'proxy-mode']);
    expect(one.json.steps[0].check).toBeUndefined();
    expect(one.json.steps[0].hints.length).toBeGreaterThan(0);
  });

  it('answers unknown lab, step and mode ids with 404 and the known ids', async () => {
    const lab = await api('POST', '/api/labs/nope/steps/deploy-web/check', { mode: 'iptables' });
    expect(lab.status).toBe(404);
    expect(lab.json.error.message).toMatch(/^Unknown lab "nope"\. Known: (.+, )?first-service[,.]/);
    const step = await api('POST', '/api/labs/first-service/steps/nope/check', { mode: 'iptables' });
    expect(step.status).toBe(404);
    expect(step.json.error.message).toBe('Unknown step of lab first-service "nope". Known: deploy-web, expose-web, reach-web, proxy-mode.');
    const mode = await api('POST', '/api/labs/first-service/steps/deploy-web/check', { mode: 'bpf' });
    expect(mode.status).toBe(404);
    expect(mode.json.error.message).toContain('Known: iptables, ipvs, nftables, cilium.');
    expect((await api('GET', '/api/labs/..%2F..%2Fetc')).status).toBe(404);
    expect((await api('POST', '/api/labs/first-service/steps/deploy-web/check', ['iptables'])).status).toBe(400);
  });

  it('reports a check while the cluster is absent as an error with a fix, not a fail', async () => {
    doubles = useDoubles({ rules: [] });
    restore = applyEnv(doubles.env);
    const r = await api('POST', '/api/labs/first-service/steps/deploy-web/check', { mode: 'iptables' });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: 'error', lab: 'first-service', step: 'deploy-web', mode: 'iptables' });
    expect(r.json.message).toMatch(/^The iptables cluster is not running/);
    expect(r.json.fix).toContain('dplab up iptables');
    expect(doubles.calls()).toHaveLength(0);
  });

  it('reports an unreachable API server as an error, not a fail', async () => {
    withCluster({
      rules: [
        {
          tool: 'kubectl',
          stderr: 'The connection to the server 127.0.0.1:40123 was refused - did you specify the right host or port?\n',
          exit: 1,
        },
      ],
    });
    const r = await api('POST', '/api/labs/first-service/steps/deploy-web/check', { mode: 'iptables' });
    expect(r.json.status).toBe('error');
    expect(r.json.message).toBe('The iptables cluster is not reachable: its API server did not answer.');
  });

  it('reports a check that times out as an error saying so', async () => {
    withCluster({ rules: [{ tool: 'kubectl', delayMs: 10_000, stdout: '{}' }] }, { DPLAB_CHECK_DEADLINE_MS: '700' });
    const started = Date.now();
    const r = await api('POST', '/api/labs/first-service/steps/deploy-web/check', { mode: 'iptables' });
    expect(r.json.status).toBe('error');
    expect(r.json.message).toMatch(/timed out/);
    expect(Date.now() - started).toBeLessThan(8_000);
  });

  it('fails an unfinished step with the message and facts, and records a pass in progress', async () => {
    withCluster();
    const r = await api('POST', '/api/labs/first-service/steps/deploy-web/check', { mode: 'iptables' });
    expect(r.json).toMatchObject({ status: 'fail', message: 'There is no Deployment `web` in namespace `lab-first-service` yet.' });
    expect(r.json.facts[0]).toEqual({ label: 'Deployment web', expected: 'exists', seen: 'not found', ok: false });
    expect(r.json.observations).toBeUndefined();

    doubles!.setState({ s1: '1' });
    const ok = await api('POST', '/api/labs/first-service/steps/deploy-web/check', { mode: 'iptables' });
    expect(ok.json.status).toBe('pass');
    const progress = await api('GET', '/api/progress');
    expect(progress.json.labs['first-service']).toMatchObject({ mode: 'iptables', passed: { iptables: ['deploy-web'] } });
    const file = JSON.parse(readFileSync(join(doubles!.env.DPLAB_STATE_DIR, 'progress.json'), 'utf8'));
    expect(file.labs['first-service'].passed.iptables).toEqual(['deploy-web']);
  });

  it('applies a solution through bash with the lab kubeconfig, and resets the lab', async () => {
    withCluster();
    const solve = await api('POST', '/api/labs/first-service/steps/expose-web/solve', { mode: 'iptables' });
    expect(solve.status).toBe(200);
    expect(solve.json.commands).toEqual(['kubectl -n lab-first-service apply -f first-service/web-service.yaml']);
    expect(doubles!.state().s2).toBe('1');
    doubles!.setState({ setup: '1' });
    const reset = await api('POST', '/api/labs/first-service/reset', { mode: 'iptables' });
    expect(reset.status).toBe(200);
    // The namespace is kept and emptied in place, not deleted and waited for.
    expect(
      doubles!
        .commandLines()
        .filter((l) => /^kubectl --kubeconfig .*lab-first-service( |$)/.test(l))
        .map((l) =>
          l
            .replace(/^kubectl --kubeconfig \S+ /, '')
            .replace(/^delete \S+ -n/, 'delete <kinds> -n')
            .split(' ')
            .slice(0, 3)
            .join(' '),
        ),
    ).toEqual([
      'get namespace lab-first-service',
      'label namespace lab-first-service',
      'delete <kinds> -n',
      'label namespace lab-first-service',
      'label namespace lab-first-service',
    ]);
    expect(doubles!.state().s2).toBe('0');
  });

  it('sets a lab up once: files without a cluster, then namespace and manifests, then leaves it alone', async () => {
    doubles = useDoubles(firstServiceScenario('iptables'));
    restore = applyEnv(doubles.env);
    const files = join(doubles.env.DPLAB_STATE_DIR, 'workspace', 'first-service');
    const none = await api('POST', '/api/labs/first-service/setup', { mode: 'iptables' });
    expect(none.json).toMatchObject({ cluster: 'no-cluster', files: 3, namespace: 'lab-first-service' });
    expect(readFileSync(join(files, 'web-deployment.yaml'), 'utf8')).toContain('kind: Deployment');
    expect(doubles.commandLines()).toEqual([]);

    const kc = kubeconfigPath('iptables');
    mkdirSync(dirname(kc), { recursive: true });
    writeFileSync(kc, 'apiVersion: v1\nkind: Config\n');
    const first = await api('POST', '/api/labs/first-service/setup', { mode: 'iptables' });
    expect(first.status).toBe(200);
    expect(first.json.cluster).toBe('applied');
    const lines = () =>
      doubles!.commandLines().map((l) =>
        l
          .replace(/^kubectl --kubeconfig \S+ /, '')
          .split(' ')
          .slice(0, 2)
          .join(' '),
      );
    expect(lines()).toEqual(['get namespace', 'create namespace', 'label namespace', 'label namespace']);
    const again = await api('POST', '/api/labs/first-service/setup', { mode: 'iptables' });
    expect(again.json.cluster).toBe('already');
    expect(lines()).toEqual(['get namespace', 'create namespace', 'label namespace', 'label namespace', 'get namespace']);
  });

  it('merges progress from the browser, dropping unknown labs, steps and modes', async () => {
    withCluster();
    const put = await api('PUT', '/api/progress', {
      labs: {
        'first-service': {
          mode: 'nftables',
          passed: { nftables: ['deploy-web', 'ghost-step'], bpf: ['deploy-web'] },
          hints: { 'deploy-web': 2, ghost: 1 },
        },
        'ghost-lab': { passed: { iptables: ['x'] } },
      },
    });
    expect(put.status).toBe(200);
    expect(put.json.labs).toEqual({
      'first-service': expect.objectContaining({ mode: 'nftables', passed: { nftables: ['deploy-web'] }, hints: { 'deploy-web': 2 } }),
    });
    const bad = await api('PUT', '/api/progress', { labs: { 'first-service': { hints: { 'deploy-web': 'many' } } } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toBe('Progress body is not valid: labs.first-service.hints.deploy-web: Expected number');
  });
});
