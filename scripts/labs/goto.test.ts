/**
 * Fast-forward and rewind against the cluster test doubles: first-service (4 steps) brought to
 * the start of step 3 applies steps 1–2's solutions, each checked (passing) before the next,
 * and nothing of step 3 or later; a solution that does not take stops the run at its check.
 * The same run through the API (progress as Server-Sent Events) and the CLI.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { applyEnv, useDoubles, type Doubles } from '../../test/fixtures/doubles.ts';
import { firstServiceScenario, type ScenarioOptions } from '../../test/fixtures/first-service-scenario.ts';
import { kubeconfigPath } from '../catalogue/modes.ts';
import type { ClusterEvent } from '../clusters/events.ts';
import { commandContext } from '../commands/command.ts';
import { goto } from '../commands/goto.ts';
import { startServer, type RunningServer } from '../server/http.ts';
import { gotoEventSchema, gotoResultSchema, type GotoEvent } from '../wire/goto.ts';
import { gotoActions, gotoStep } from './goto.ts';
import { readProgress } from './progress.ts';
import { loadLabs, requireLab, requireStep } from './registry.ts';

let doubles: Doubles | undefined;
let restore: (() => void) | undefined;
const lab = requireLab('first-service');

function withCluster(opts: ScenarioOptions = {}) {
  doubles = useDoubles(firstServiceScenario('iptables', opts));
  restore = applyEnv(doubles.env);
  const kc = kubeconfigPath('iptables');
  mkdirSync(dirname(kc), { recursive: true });
  writeFileSync(kc, 'apiVersion: v1\nkind: Config\n');
  return doubles;
}

afterEach(() => {
  restore?.();
  doubles?.cleanup();
  restore = undefined;
  doubles = undefined;
});

/** The kubectl verbs the run sent, without the kubeconfig flag, in order. */
function applied(d: Doubles): string[] {
  return d.commandLines().flatMap((l) => (/ apply -f (\S+)/.exec(l) ? [/ apply -f (\S+)/.exec(l)![1]] : []));
}

describe('goto (fast-forward to a step)', { timeout: 60_000 }, () => {
  it('step 3 of first-service: setup, then steps 1 and 2 solved, each checked and passing, and nothing of step 3', async () => {
    const d = withCluster();
    expect(lab.steps.length).toBeGreaterThanOrEqual(3);
    const events: ClusterEvent[] = [];
    const r = await gotoStep(lab, requireStep(lab, 'reach-web'), 'iptables', { onEvent: (e) => events.push(e) });
    expect(gotoResultSchema.parse(r)).toEqual(r);
    expect(r).toMatchObject({ status: 'ready', solved: ['deploy-web', 'expose-web'], reset: false, step: 'reach-web' });
    expect(r.message).toMatch(/at the start of step 3 .*steps 1–2 are solved and checked/);
    expect(r.checks.map((c) => [c.step, c.status])).toEqual([
      ['deploy-web', 'pass'],
      ['expose-web', 'pass'],
    ]);
    expect(d.state()).toMatchObject({ setup: '1', s1: '1', s2: '1' });
    expect(d.state().s3).toBeUndefined();
    // Setup's manifests (none in this lab), step 1's deployment, step 2's Service; never step 3's client.
    expect(applied(d)).toEqual(['first-service/web-deployment.yaml', 'first-service/web-service.yaml']);

    // Each solution is checked before the next one runs.
    const lines = d.commandLines();
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    expect(at(/label namespace lab-first-service dplab\.io\/setup/)).toBeLessThan(at(/web-deployment\.yaml/));
    expect(at(/web-deployment\.yaml/)).toBeLessThan(at(/get deployments/));
    expect(at(/get deployments/)).toBeLessThan(at(/web-service\.yaml/));
    expect(at(/web-service\.yaml/)).toBeLessThan(at(/get services/));

    // Progress: every action started and ended, in the order the page lists them.
    const actions = events.filter((e) => e.type === 'action');
    expect(actions.map((e) => `${e.phase} ${e.id}`)).toEqual(
      gotoActions(lab, requireStep(lab, 'reach-web'), false).flatMap((a) => [`start ${a.id}`, `end ${a.id}`]),
    );
    expect(new Set(actions.map((e) => e.runId)).size).toBe(1);
    expect(readProgress(loadLabs()).labs['first-service'].passed.iptables).toEqual(['deploy-web', 'expose-web']);
  });

  it('stops at the first check that does not pass, with its message, and solves nothing after it', async () => {
    const d = withCluster({ breakSolution: 'deploy-web' });
    const events: ClusterEvent[] = [];
    const r = await gotoStep(lab, requireStep(lab, 'reach-web'), 'iptables', {
      onEvent: (e) => events.push(e),
      check: { settleMs: 300, deadlineMs: 5_000 },
    });
    expect(r).toMatchObject({ status: 'failed', stoppedAt: 'deploy-web', solved: [] });
    expect(r.message).toMatch(/^Stopped at step 1 \(.+\): its check did not pass after its solution\. /);
    expect(r.message).toContain(r.checks[0].message);
    expect(applied(d)).toEqual(['first-service/web-deployment.yaml']);
    const last = events.filter((e) => e.type === 'action').at(-1);
    expect(last).toMatchObject({ id: 'check:deploy-web', phase: 'fail' });
  });

  it('reset to step 2: the namespace is emptied and set up again, then step 1 solved and checked', async () => {
    const d = withCluster();
    d.setState({ setup: '1', s1: '1', s2: '1', s3: '1' });
    const r = await gotoStep(lab, requireStep(lab, 'expose-web'), 'iptables', { reset: true });
    expect(r).toMatchObject({ status: 'ready', reset: true, solved: ['deploy-web'] });
    const lines = d.commandLines();
    const sweep = lines.findIndex((l) => /delete \S+ -n lab-first-service --ignore-not-found/.test(l));
    expect(sweep).toBeGreaterThanOrEqual(0);
    expect(sweep).toBeLessThan(lines.findIndex((l) => /web-deployment\.yaml/.test(l)));
    expect(d.state()).toMatchObject({ s1: '1', s2: '0', s3: '0' });
  });

  it('says so when the cluster is not running, and runs nothing', async () => {
    doubles = useDoubles(firstServiceScenario('iptables'));
    restore = applyEnv(doubles.env);
    const r = await gotoStep(lab, requireStep(lab, 'reach-web'), 'iptables');
    expect(r).toMatchObject({ status: 'error', solved: [] });
    expect(r.message).toMatch(/not running/);
    expect(r.fix).toMatch(/dplab up iptables/);
    expect(doubles.commandLines()).toEqual([]);
  });
});

describe('goto through the CLI and the API', { timeout: 60_000 }, () => {
  let server: RunningServer;
  let site: string;
  const TOKEN = 'goto-api-test-token-0123456789ab';
  beforeAll(async () => {
    site = mkdtempSync(join(tmpdir(), 'dplab-site-'));
    server = await startServer({ port: 0, portExplicit: true, token: TOKEN, siteDir: site });
  });
  afterAll(async () => {
    await server.close();
    rmSync(site, { recursive: true, force: true });
  });

  it('dplab goto prints each action and the outcome, exit code 0', async () => {
    const d = withCluster();
    let out = '';
    let err = '';
    const code = await goto.run(
      ['first-service', 'reach-web', '--mode', 'iptables'],
      commandContext({ stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) } }),
    );
    expect(code).toBe(0);
    expect(err).toContain('✓ Step 1, ');
    expect(err).toMatch(/✓ Step 2, .*: check/);
    expect(out).toMatch(/at the start of step 3/);
    expect(applied(d)).toHaveLength(2);
  });

  it('POST …/steps/reach-web/goto streams the progress, then the result', async () => {
    const d = withCluster();
    const origin = `http://127.0.0.1:${server.port}`;
    const res = await fetch(`${origin}/api/labs/first-service/steps/reach-web/goto`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, origin, 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'iptables', reset: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events: GotoEvent[] = (await res.text())
      .split('\n\n')
      .filter((block) => block.includes('data: '))
      .map((block) => gotoEventSchema.parse(JSON.parse(block.slice(block.indexOf('data: ') + 6))));
    expect(events[0]).toMatchObject({ type: 'info' });
    expect(events.filter((e) => e.type === 'action').map((e) => (e.type === 'action' ? `${e.phase} ${e.id}` : ''))).toContain(
      'end check:expose-web',
    );
    const last = events.at(-1);
    expect(last?.type === 'result' && last.result).toMatchObject({ status: 'ready', reset: true, solved: ['deploy-web', 'expose-web'] });
    expect(applied(d)).toEqual(['first-service/web-deployment.yaml', 'first-service/web-service.yaml']);
    expect(JSON.parse(readFileSync(join(d.env.DPLAB_STATE_DIR, 'progress.json'), 'utf8')).labs['first-service'].passed.iptables).toEqual([
      'deploy-web',
      'expose-web',
    ]);

    const bad = await fetch(`${origin}/api/labs/first-service/steps/reach-web/goto`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, origin, 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'iptables', reset: 'yes' }),
    });
    expect(bad.status).toBe(400);
    const viewer = await fetch(`${origin}/api/labs/first-service/steps/reach-web/goto`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.runner.viewerToken}`, origin, 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'iptables' }),
    });
    expect(viewer.status).toBe(401);
  });
});
