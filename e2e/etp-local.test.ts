/**
 * Browser tier for core exercise 4: the etp-local page walked to the end against the cluster
 * test doubles (iptables mode). kubectl answers with the lab's own hand-written observations,
 * `docker inspect` gives the node addresses, and the probe helper (`docker run … curl`) answers
 * or times out per node as externalTrafficPolicy Local or Cluster would. Each step: Check fails
 * with the unsolved message, the learner's change (Apply solution, or the doubles' state where
 * the solution would reach real node addresses) makes Check pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Doubles, type Rule, type Scenario } from '../test/fixtures/doubles.ts';
import { DOCKER_INFO } from '../test/fixtures/cluster-scenarios.ts';
import { resetProbeRoute } from '../scripts/clusters/probe.ts';
import { recordedObservations } from '../test/fixtures/recorded.ts';
import { hasChromium, chromiumNote, openSignedIn, stageWithDoubles, type Browser, type Course, type Stage } from './harness.ts';

const LAB = 'etp-local';
const NS = 'lab-etp-local';
const MODE = 'iptables';
const PAGE = `/labs/${LAB}/`;
const NODES = ['dplab-iptables-control-plane', 'dplab-iptables-worker', 'dplab-iptables-worker2'];
const EMPTY = JSON.stringify({ apiVersion: 'v1', items: [], kind: 'List', metadata: { resourceVersion: '' } });
const step = (id: string) => `dplab-lab .dplab-step[data-step="${id}"]`;

/** The recorded observations, with a seat's cluster name (`dplab-rec-iptables`, when recorded beside CI's) made the page's own. */
const observed = (stepId: string, state: 'solved' | 'unsolved') =>
  JSON.parse(
    JSON.stringify(recordedObservations(LAB, stepId, state, MODE)).replace(/dplab-[a-z0-9-]+?-iptables(?=-|\b)/g, `dplab-${MODE}`),
  ) as ReturnType<typeof recordedObservations>;

/** The cluster as the lab's observations describe it; flags s1…s3 say which steps the learner has done. */
function etpScenario(): Scenario {
  const pin = observed('pin-web', 'solved');
  const local = observed('local-policy', 'solved');
  const cluster = observed('cluster-policy', 'solved');
  const k = (match: string, rest: Omit<Rule, 'tool' | 'match'> = {}): Rule => ({ tool: 'kubectl', match, ...rest });
  const ips: Record<string, string> = local.traffic.nodeIps;
  /** What the probe helper prints: curl's body, a newline, the status code; or curl's timeout. */
  const probeRules = (state: Record<string, string>, probes: { answered: boolean; body?: string; url: string }[]): Rule[] =>
    probes.map((p) => ({
      tool: 'docker',
      // curl's -w argument holds a newline, so match across lines.
      match: `^run --rm --network kind [\\s\\S]* ${p.url.replace(/[.]/g, '\\.')}$`,
      when: state,
      ...(p.answered ? { stdout: `${p.body}\n200` } : { exit: 28, stderr: 'curl: (28) Connection timed out after 3002 milliseconds\n' }),
    }));
  return {
    rules: [
      { tool: 'kind', match: `^get nodes --name dplab-${MODE}$`, stdout: `${NODES.join('\n')}\n` },
      // A machine with Docker running: no cluster is kept from starting.
      { tool: 'docker', match: '^info ', stdout: DOCKER_INFO },
      ...NODES.map((n): Rule => ({ tool: 'docker', match: `^inspect -f .* ${n}$`, stdout: `${ips[n]} \n` })),
      ...probeRules({ s3: '1' }, cluster.traffic.probes.probes),
      ...probeRules({ s2: '1' }, local.traffic.probes.probes),
      // step 1: the learner labels a worker and applies the Deployment (run by Apply solution)
      k(`label node dplab-${MODE}-worker dplab-web=yes --overwrite$`, { stdout: `node/dplab-${MODE}-worker labeled\n` }),
      k(`-n ${NS} apply -f etp-local/web-deployment\\.yaml$`, { stdout: 'deployment.apps/web created\n', set: { s1: '1' } }),
      k(`-n ${NS} rollout status deployment/web`, { stdout: 'deployment "web" successfully rolled out\n' }),
      k('get deployments .*metadata\\.name=web', { when: { s1: '1' }, stdout: JSON.stringify(pin.deployment.deployments) }),
      k('get deployments', { stdout: EMPTY }),
      k(`get pods -n ${NS} -l app=web`, { when: { s1: '1' }, stdout: JSON.stringify(pin.placement.pods) }),
      k('get pods', { stdout: EMPTY }),
      // steps 2 and 3: the Service, Local and then Cluster
      k('get services .*metadata\\.name=web', { when: { s3: '1' }, stdout: JSON.stringify(cluster.service.services) }),
      k('get services .*metadata\\.name=web', { when: { s2: '1' }, stdout: JSON.stringify(local.service.services) }),
      k('get services', { stdout: EMPTY }),
    ],
  };
}

describe.skipIf(!hasChromium)(`etp-local in the browser, walked to the end${chromiumNote}`, { timeout: 90_000 }, () => {
  let stage: Stage;
  let course: Course;
  let browser: Browser;
  let doubles: Doubles;

  beforeAll(async () => {
    stage = await stageWithDoubles(etpScenario(), { env: { DPLAB_PROBE_FROM: 'helper' }, clusterOf: MODE });
    ({ course, browser, doubles } = stage);
    // The probe route (host or helper container) is chosen once; choose again under the doubles.
    resetProbeRoute();
    await openSignedIn(browser.page, course, PAGE);
  });
  afterAll(async () => {
    await stage?.close();
    resetProbeRoute();
  });

  async function check(id: string, status: 'pass' | 'fail'): Promise<string> {
    const { page } = browser;
    await page.locator(`${step(id)} [data-action="check"]`).click();
    const result = page.locator(`${step(id)} .dplab-result[data-status="${status}"]`);
    await result.waitFor({ timeout: 30_000 }).catch(async (err) => {
      // Say what the page showed instead, so a failure here explains itself.
      throw new Error(`${id}: no ${status} result; the page shows: ${await page.locator(`${step(id)} .dplab-result`).textContent()}`, {
        cause: err,
      });
    });
    await expect.poll(async () => page.locator(step(id)).getAttribute('aria-busy')).toBeNull();
    return (await result.textContent()) ?? '';
  }

  it('pin-web: fails without the Deployment, passes after Apply solution', async () => {
    const { page } = browser;
    expect(await check('pin-web', 'fail')).toContain('There is no Deployment web in namespace lab-etp-local yet.');
    await page.locator(`${step('pin-web')} summary`).click();
    await page.locator(`${step('pin-web')} [data-action="solve"]`).click();
    const result = page.locator(`${step('pin-web')} .dplab-result[data-status="pass"]`);
    await result.waitFor({ timeout: 30_000 });
    expect(await result.textContent()).toContain('Both web pods run on dplab-iptables-worker');
    expect(doubles.commandLines()).toEqual(
      expect.arrayContaining([expect.stringMatching(/^kubectl label node dplab-iptables-worker dplab-web=yes --overwrite$/)]),
    );
  });

  it('local-policy: fails without the Service; with Local only the worker answers and the pod sees the client', async () => {
    expect(await check('local-policy', 'fail')).toContain('There is no Service web in namespace lab-etp-local yet.');
    doubles.setState({ s2: '1' });
    const text = await check('local-policy', 'pass');
    // The client address and NodePort the recorded observations saw (the doubles replay them).
    const seen = observed('local-policy', 'solved').traffic.probes as { port: number; probes: { answered: boolean; body?: string }[] };
    const client = seen.probes.find((p) => p.answered)!.body!.split(':')[0];
    expect(text).toContain(`The pods saw the client's real address, ${client}.`);
    const rows = await browser.page.locator(`${step('local-policy')} .dplab-result tr`).allTextContents();
    expect(rows.join('\n')).toMatch(new RegExp(`dplab-iptables-control-plane:${seen.port}/clientip.*no answer`));
    // Every node was probed from outside: through the helper container, never from a node.
    const probes = doubles.commandLines().filter((l) => l.startsWith('docker run --rm --network kind'));
    const nodeIps = Object.values(observed('local-policy', 'solved').traffic.nodeIps as Record<string, string>);
    expect(new Set(probes.map((l) => l.split(' ').pop()))).toEqual(new Set(nodeIps.map((ip) => `http://${ip}:${seen.port}/clientip`)));
    expect(doubles.commandLines().some((l) => /^docker exec \S+ curl/.test(l))).toBe(false);
  });

  it('cluster-policy: fails while the policy is Local; with Cluster every node answers and SNAT shows', async () => {
    expect(await check('cluster-policy', 'fail')).toContain(
      'Service web exists, but its externalTrafficPolicy is Local where the step needs Cluster.',
    );
    doubles.setState({ s3: '1' });
    expect(await check('cluster-policy', 'pass')).toContain('the node masqueraded (SNAT) before forwarding');
  });

  // follow-nodeport and nodeport-masquerade read node rules, which these doubles do not play;
  // the replay tier and the sim and kind tiers walk them.
  it('the three traffic steps end green and the progress counts them', async () => {
    const { page } = browser;
    for (const id of ['pin-web', 'local-policy', 'cluster-policy'])
      expect(await page.locator(step(id)).getAttribute('data-status')).toBe('pass');
    expect(await page.locator('dplab-lab .dplab-progress-text').textContent()).toBe(`3 of 5 steps done on ${MODE}`);
  });
});
