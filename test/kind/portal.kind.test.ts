/**
 * A workshop on a real Kubernetes cluster: the portal and its seats as the operator's guide
 * installs them, on a real kind cluster made by the product, with images built here.
 * - The seat images (seat-images.ts) go into the cluster with `kind load`; the manifests in
 *   scripts/portal/manifests/ are applied with `--validate=strict`, changed only in their image
 *   names, and the portal runs with its ServiceAccount's token only.
 * - In Chromium, through `kubectl port-forward` (as an operator tries a portal before its Ingress):
 *   a learner joins, the portal makes a seat pod that a real kubelet starts (the runner and the
 *   Docker-in-Docker sidecar), the learner's shell is in that pod, Start makes a kind cluster in
 *   the seat's own Docker, Check reads it; the instructor sees the step and the terminal; the
 *   learner swaps it for a Cilium cluster (its chart from the seat image); End workshop removes
 *   every seat object.
 * The seat's Docker cannot pull either: the test copies the node image and agnhost into it, as a
 *   registry would serve them. Screenshots: test-results/screenshots/kind-portal-*.png.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { parseAllDocuments } from 'yaml';
import { CommandError, run } from '../../scripts/base/exec.ts';
import { projectRoot } from '../../scripts/base/paths.ts';
import { buildIsStale, buildSite } from '../../scripts/base/site-build.ts';
import { clusterName, kubeconfigPath, type Mode } from '../../scripts/catalogue/modes.ts';
import { ClusterManager } from '../../scripts/clusters/manager.ts';
import { kubectlFor } from '../../scripts/clusters/kube.ts';
import { labImages } from '../../scripts/labs/images.ts';
import { DOCKER_HOST, MANAGED_SELECTOR, seatObjectName } from '../../scripts/portal/seat-objects.ts';
import { chromiumNote, hasChromium, launchBrowser, type Browser } from '../../e2e/harness.ts';
import { screenshot } from '../../e2e/workspace-view.ts';
import { boundingSetLacksSysResource, ensureTestEnv } from './environment.ts';
import { engineEnv } from './engine.ts';
import { AGNHOST_IMAGE } from './images.ts';
import { ensureSeatImages, type SeatImages } from './seat-images.ts';
import { freePort } from '../../scripts/base/free-port.ts';
import { keepForwarding, type KeptForward } from './port-forward.ts';

const MODE: Mode = 'iptables';
const NS = 'dplab-workshop';
const MANIFESTS = ['namespace', 'serviceaccount', 'rbac', 'service', 'deployment'];
const LEARNER = 'Ada';
const step = (id: string) => `dplab-lab .dplab-step[data-step="${id}"]`;
const shell = 'dplab-terminal:not([node])';
const say = (l: string) => console.log(`[kind-portal] ${l}`);

const kubectlRun = kubectlFor(MODE);
const kubectl = (args: string[], timeoutMs = 120_000) => kubectlRun(args, { timeoutMs }).then((r) => r.stdout);

/**
 * The manifests as an operator applies them, with this environment's images and the portal's
 * port set to the one the port-forward uses (the portal answers loopback names on its own port).
 */
function manifests(images: SeatImages, port: number): string {
  const docs = MANIFESTS.flatMap((name) =>
    parseAllDocuments(readFileSync(join(projectRoot, 'scripts/portal/manifests', `${name}.yaml`), 'utf8')).map((d) => d.toJS()),
  );
  const deploy = docs.find((d) => d.kind === 'Deployment');
  const c = deploy.spec.template.spec.containers[0];
  c.image = images.runner;
  c.args = c.args.map((a: string, i: number) => (c.args[i - 1] === '--port' ? String(port) : a));
  c.ports[0].containerPort = port;
  for (const e of c.env) if (e.name === 'DPLAB_SEAT_IMAGE') e.value = images.runner;
  c.env.push({ name: 'DPLAB_SEAT_DIND_IMAGE', value: images.dind });
  return docs.map((d) => JSON.stringify(d)).join('\n');
}

async function terminalText(page: Page, selector = shell): Promise<string> {
  return (await page.locator(`${selector} .xterm-rows`).textContent())?.replace(/\u00a0/g, ' ') ?? '';
}

async function typeIn(page: Page, line: string, selector = shell): Promise<void> {
  await page.locator(`${selector} .xterm`).click();
  await page.keyboard.type(line);
  await page.keyboard.press('Enter');
}

/**
 * Polls the cluster panel after Start until it is ready (returns 'ready'), shows an error, or
 * never leaves 'absent' (Start did not begin); otherwise what it showed last.
 */
async function startOutcome(panel: ReturnType<Page['locator']>, timeoutMs = 15 * 60_000): Promise<string> {
  const started = Date.now();
  let seen = '';
  let left = false;
  let offlineSince = 0;
  while (Date.now() - started < timeoutMs) {
    const state = (await panel.getAttribute('data-state')) ?? '';
    if (state === 'ready') return 'ready';
    const error = (await panel.locator('.dplab-cp-error').allTextContents()).join(' ').trim();
    if (error) return `state ${state}, the panel says: ${error}`;
    if (state !== 'absent') left = true;
    if (!left && Date.now() - started > 60_000) return 'the panel never left "absent": Start did not begin';
    // The page lost the seat's runner: as a learner would, press "Check again" (a blip, such as
    // the test's port-forward starting again, ends there); a minute of it means the seat is gone
    // (the pod evicted or killed) and nothing will finish.
    if (state === 'offline') {
      offlineSince ||= Date.now();
      await panel
        .locator('button', { hasText: /^Check again$/ })
        .click({ timeout: 5_000 })
        .catch(() => undefined);
    } else offlineSince = 0;
    if (offlineSince && Date.now() - offlineSince > 60_000)
      return `the page could not reach the seat's runner for a minute: ${((await panel.textContent()) ?? '').replace(/\s+/g, ' ').slice(0, 300)}`;
    seen = `state ${state}: ${((await panel.textContent()) ?? '').replace(/\s+/g, ' ').slice(0, 400)}`;
    await new Promise((r) => setTimeout(r, 2_000));
  }
  return `still not ready after ${timeoutMs / 60_000} min; last seen ${seen}`;
}

interface PodJson {
  metadata: { name: string; creationTimestamp: string; deletionTimestamp?: string; labels: Record<string, string> };
  spec: {
    nodeName?: string;
    serviceAccountName?: string;
    automountServiceAccountToken?: boolean;
    dnsPolicy?: string;
    containers: { name: string; image: string }[];
  };
  status: { phase: string; conditions?: { type: string; status: string; lastTransitionTime: string }[] };
}

describe.skipIf(!hasChromium)(`a workshop on a real Kubernetes cluster${chromiumNote}`, () => {
  const manager = new ClusterManager({ imagesFor: labImages });
  let images: SeatImages;
  let port = 0;
  let origin = '';
  let forward: KeptForward | undefined;
  let code = '';
  let instructorToken = '';
  let learner: Browser;
  let instructor: Browser;
  let seat = '';
  let nodeImage = '';

  beforeAll(async () => {
    if (buildIsStale().stale) await buildSite();
    // Built by the global set-up already; this only reads what it made.
    const env = await ensureTestEnv();
    nodeImage = env.nodeImage;
    let t = Date.now();
    images = await ensureSeatImages({
      overlay: env.overlay,
      cgroupV1: env.components.cgroup === 'v1',
      lacksSysResource: boundingSetLacksSysResource(),
      engine: engineEnv(),
      say,
    });
    say(`seat images in ${Math.round((Date.now() - t) / 1000)} s: ${images.runner}, ${images.dind}`);
    t = Date.now();
    await manager.ensure(MODE);
    say(`the workshop's cluster (${clusterName(MODE)}, made by the product) in ${Math.round((Date.now() - t) / 1000)} s`);
    t = Date.now();
    // The workers only: the control plane's taint keeps seats and the portal off it.
    const workers = [`${clusterName(MODE)}-worker`, `${clusterName(MODE)}-worker2`];
    await run('kind', ['load', 'docker-image', images.runner, images.dind, '--name', clusterName(MODE), '--nodes', workers.join(',')], {
      timeoutMs: 15 * 60_000,
    });
    say(`kind load of both seat images into the workers: ${Math.round((Date.now() - t) / 1000)} s`);
    port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    await kubectlRun(['apply', '--validate=strict', '-f', '-'], { input: manifests(images, port), timeoutMs: 120_000 });
    await kubectl(['-n', NS, 'rollout', 'status', 'deploy/dplab-portal', '--timeout=300s'], 320_000).catch(async (err) => {
      // The portal's own words say why it is not running.
      const logs = await kubectl(['-n', NS, 'logs', 'deploy/dplab-portal', '--tail=20']).catch((e: Error) => e.message);
      throw new Error(`${(err as Error).message}\nportal log:\n${logs}`);
    });
    forward = await keepForwarding(
      ['--kubeconfig', kubeconfigPath(MODE), '-n', NS, 'port-forward', 'deploy/dplab-portal', `${port}:${port}`],
      say,
    );
    const logs = await kubectl(['-n', NS, 'logs', 'deploy/dplab-portal']);
    code = /code (\S+)/.exec(logs)?.[1] ?? '';
    instructorToken = /#token=(\S+)/.exec(logs)?.[1] ?? '';
    expect(code, logs).not.toBe('');
    expect(instructorToken, logs).not.toBe('');
    learner = await launchBrowser();
    instructor = await launchBrowser();
  });

  afterAll(async () => {
    await learner?.close();
    await instructor?.close();
    forward?.stop();
    await kubectl(['delete', 'namespace', NS, '--ignore-not-found', '--wait=true', '--timeout=180s'], 200_000).catch((e) => say(String(e)));
    await manager.delete(MODE);
  });

  /** The seat's own Docker, as its sidecar serves it. */
  const seatDocker = (args: string[]) =>
    kubectl(['-n', NS, 'exec', seatObjectName(seat), '-c', 'dind', '--', 'docker', `--host=${DOCKER_HOST}`, ...args]);
  /** The names of the containers in the seat's Docker (a kind cluster's nodes), sorted. */
  const seatNodes = async () => (await seatDocker(['ps', '--format', '{{.Names}}'])).split('\n').filter(Boolean).sort();

  /**
   * Start in the bar for the mode on show, as the learner clicks it; ready, or what stopped it:
   * the panel's own error, the seat's containers (an OOM-killed sidecar takes the seat's Docker
   * with it) and the seat runner's log, at once.
   */
  async function startInSeat(mode: Mode): Promise<void> {
    const page = learner.page;
    const t = Date.now();
    await page.locator('.dplab-ws-bar .dplab-cluster:not([hidden]) dplab-cluster-panel button', { hasText: /^Start$/ }).click();
    const outcome = await startOutcome(page.locator(`.dplab-ws-bar dplab-cluster-panel[mode="${mode}"]`));
    if (outcome !== 'ready') {
      const log = await kubectl(['-n', NS, 'logs', seatObjectName(seat), '-c', 'runner', '--tail=60']).catch((e: Error) => e.message);
      const containers = await kubectl(['-n', NS, 'get', 'pod', seatObjectName(seat), '-o', 'jsonpath={.status.containerStatuses}']).catch(
        (e: Error) => e.message,
      );
      const events = await kubectl(['-n', NS, 'get', 'events', '--sort-by=.lastTimestamp']).catch((e: Error) => e.message);
      // The seat's own cluster, read from inside the seat as the learner's kubectl would.
      const inSeat = (args: string[]) =>
        kubectl([
          '-n',
          NS,
          'exec',
          seatObjectName(seat),
          '-c',
          'runner',
          '--',
          'kubectl',
          '--kubeconfig',
          `/var/lib/dplab/kube/${clusterName(mode)}.yaml`,
          ...args,
        ]).catch((e: Error) => e.message);
      const pods = await inSeat(['get', 'pods', '-A', '-o', 'wide']);
      const agent = mode === 'cilium' ? await inSeat(['-n', 'kube-system', 'logs', 'ds/cilium', '-c', 'cilium-agent', '--tail=40']) : '';
      throw new Error(
        [
          `Start (${mode}) in the seat did not reach ready: ${outcome}`,
          `the seat's containers: ${containers}`,
          `the seat runner's log:\n${log}`,
          `events in ${NS}:\n${events.split('\n').slice(-25).join('\n')}`,
          `pods of the seat's cluster:\n${pods}`,
          agent ? `a Cilium agent's log:\n${agent}` : '',
          `load: ${readFileSync('/proc/loadavg', 'utf8').trim()}`,
          forward?.exits.length
            ? `the test's kubectl port-forward to the portal ended ${forward.exits.length} time(s): ${forward.exits.join('; ')}`
            : '',
        ].join('\n'),
      );
    }
    say(`Start → ${mode} cluster ready in the seat: ${Math.round((Date.now() - t) / 1000)} s`);
  }

  it('the manifests apply with --validate=strict, and the portal holds only its Role', async () => {
    // `auth can-i` answers "no" with exit code 1.
    const can = (verb: string, what: string, ns = NS, ...more: string[]) =>
      kubectlRun(['auth', 'can-i', verb, what, ...more, '-n', ns, `--as=system:serviceaccount:${NS}:dplab-portal`], {
        timeoutMs: 30_000,
      }).then(
        (r) => r.stdout.trim(),
        (e: unknown) => (e instanceof CommandError ? e.stdout.trim() : Promise.reject(e)),
      );
    expect(await can('create', 'pods')).toBe('yes');
    expect(await can('delete', 'secrets')).toBe('yes');
    expect(await can('create', 'pods', 'default')).toBe('no');
    expect(await can('list', 'secrets')).toBe('no');
    expect(await can('create', 'pods', NS, '--subresource=exec')).toBe('no');
    expect(await can('get', 'pods', NS, '--subresource=log')).toBe('no');
    expect(await can('list', 'nodes')).toBe('no');
    const pod = JSON.parse(await kubectl(['-n', NS, 'get', 'pods', '-l', 'app.kubernetes.io/name=dplab-portal', '-o', 'json']))
      .items[0] as PodJson;
    expect(pod.spec.serviceAccountName).toBe('dplab-portal');
    expect(pod.status.phase).toBe('Running');
  });

  it('a learner joins in Chromium and gets a seat: a real pod, scheduled and started by a real kubelet', async () => {
    const page = learner.page;
    await page.goto(`${origin}/portal/join`);
    await page.fill('#code', code.toLowerCase());
    await page.fill('#name', LEARNER);
    const clicked = Date.now();
    await page.click('button[type="submit"]');
    await page.waitForURL(/\/labs\/first-service\/$/, { timeout: 10 * 60_000 });
    await page.waitForSelector(`${shell}[data-state="open"]`, { timeout: 5 * 60_000 });
    const joinToTerminal = Date.now() - clicked;
    const pods = JSON.parse(await kubectl(['-n', NS, 'get', 'pods', '-l', MANAGED_SELECTOR, '-o', 'json'])).items as PodJson[];
    expect(pods).toHaveLength(1);
    const pod = pods[0];
    seat = pod.metadata.labels['dplab.io/seat'];
    expect(pod.metadata.name).toBe(seatObjectName(seat));
    expect(pod.status.phase).toBe('Running');
    expect(pod.spec.nodeName).toMatch(new RegExp(`^${clusterName(MODE)}-`));
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    expect(pod.spec.dnsPolicy).toBe('Default');
    expect(Object.fromEntries(pod.spec.containers.map((c) => [c.name, c.image]))).toEqual({ runner: images.runner, dind: images.dind });
    const at = (type: string) => Date.parse(pod.status.conditions!.find((c) => c.type === type && c.status === 'True')!.lastTransitionTime);
    const created = Date.parse(pod.metadata.creationTimestamp);
    say(
      `join → terminal open: ${(joinToTerminal / 1000).toFixed(1)} s; pod created → scheduled ${(at('PodScheduled') - created) / 1000} s → Ready ${(at('Ready') - created) / 1000} s (API timestamps, 1 s resolution), on ${pod.spec.nodeName}`,
    );
    await screenshot(page, 'kind-portal-1-joined');
  });

  it("the learner's shell runs in the seat pod, as its user, with the seat's own Docker and no cluster credentials", async () => {
    const page = learner.page;
    await typeIn(page, 'echo "ID=$(id -u) ENGINE=$(docker info --format "{{.ServerVersion}}") SA=$(ls /var/run/secrets 2>&1 | wc -l) END"');
    const answer = /ID=(\d+) ENGINE=(\S+) SA=(\d+) END/;
    await expect.poll(async () => answer.exec(await terminalText(page))?.[1], { timeout: 30_000 }).toBe('1000');
    const [, , engine, sa] = answer.exec(await terminalText(page))!;
    expect(engine).toMatch(/^20\.10\./);
    expect(sa).toBe('1');
  });

  it("Start makes a kind cluster inside the seat's Docker, and Check reads it", async () => {
    const page = learner.page;
    // What a registry would serve the seat: the node image and agnhost, copied into its Docker.
    const t = Date.now();
    await run(
      'bash',
      [
        '-c',
        'docker save "$1" "$2" | kubectl --kubeconfig "$3" -n "$4" exec -i "$5" -c dind -- docker --host="$6" load',
        'load',
        nodeImage,
        AGNHOST_IMAGE,
        kubeconfigPath(MODE),
        NS,
        seatObjectName(seat),
        DOCKER_HOST,
      ],
      { timeoutMs: 15 * 60_000, env: engineEnv().env },
    );
    say(`node image and agnhost into the seat's Docker: ${Math.round((Date.now() - t) / 1000)} s`);
    // Too early: there is no cluster in the seat yet, and the check says so.
    await page.locator(`${step('deploy-web')} [data-action="check"]`).click();
    const early = page.locator(`${step('deploy-web')} .dplab-result[data-status]:not([data-status="busy"])`);
    await early.waitFor({ timeout: 60_000 });
    const earlyText = (await early.textContent())?.trim() ?? '';
    say(`check before Start: ${await early.getAttribute('data-status')}: ${earlyText.slice(0, 200)}`);
    expect(await early.getAttribute('data-status')).not.toBe('pass');
    expect(earlyText).toMatch(/iptables/);
    await startInSeat(MODE);
    await expect.poll(() => page.locator('.dplab-setup').getAttribute('data-state'), { timeout: 5 * 60_000, interval: 2_000 }).toBe('done');
    await screenshot(page, 'kind-portal-2-ready');
    expect(await seatNodes()).toEqual([
      `${clusterName(MODE)}-control-plane`,
      `${clusterName(MODE)}-worker`,
      `${clusterName(MODE)}-worker2`,
    ]);
    // The nested cluster's DNS has no loop: the seat asks the node's resolvers, not an address
    // in the Service range its own clusters use (with this cluster's 10.96.0.10, CoreDNS in
    // the seat found a loop and crash-looped in one run out of three).
    const resolvConf = await kubectl(['-n', NS, 'exec', seatObjectName(seat), '-c', 'dind', '--', 'cat', '/etc/resolv.conf']);
    expect(resolvConf).not.toMatch(/^nameserver 10\.96\./m);
    for (const run of await page.locator(`${step('deploy-web')} .dplab-snippets [data-action="run"]`).all()) await run.click();
    // A Run waits for the prompt of the one before (the run queue): type only once the last was sent.
    await expect.poll(() => page.locator(`${shell}[data-queued]`).count(), { timeout: 300_000, interval: 1_000 }).toBe(0);
    // The marker is worked out by the shell, so the echoed command line itself does not match it.
    await typeIn(page, 'kubectl -n lab-first-service rollout status deploy/web --timeout=300s && echo "ROLLED-OUT-$((40+2))"');
    await expect.poll(() => terminalText(page), { timeout: 320_000, interval: 2_000 }).toContain('ROLLED-OUT-42');
    await page.locator(`${step('deploy-web')} [data-action="check"]`).click();
    await page.locator(`${step('deploy-web')} .dplab-result[data-status="pass"]`).waitFor({ timeout: 120_000 });
    await screenshot(page, 'kind-portal-3-check');
  });

  it("the instructor's dashboard shows the seat's step and watches its terminal", async () => {
    const page = instructor.page;
    await page.goto(`${origin}/portal/dashboard#token=${instructorToken}`);
    const row = page.locator(`tr[data-seat="${seat}"]`);
    await expect.poll(() => row.locator('td:nth-child(2)').textContent(), { timeout: 30_000 }).toContain(LEARNER);
    await expect
      .poll(() => row.locator('td[data-step="deploy-web"] .cell').getAttribute('data-status'), { timeout: 30_000 })
      .toBe('passed');
    await row.locator('[data-watch]').click();
    await expect.poll(() => page.locator('#watch-screen').textContent(), { timeout: 30_000 }).toContain('ROLLED-OUT-42');
    await typeIn(learner.page, 'echo "WATCHED-$((40+2))"');
    await expect.poll(() => page.locator('#watch-screen').textContent(), { timeout: 30_000 }).toContain('WATCHED-42');
    await screenshot(page, 'kind-portal-4-dashboard');
    await page.click('#watch-close');
  });

  // Not yet part of the tier (it adds ~5 min); it passed here (Start 127 s, Check passing). Check
  // once said "0 of 3 replicas ready" because the test's rolled-out marker matched the typed
  // command line, so Check ran before the rollout had finished; the markers are now worked out
  // by the shell. Before the seat's Docker storage was raised to 16Gi the kubelet evicted the
  // seat mid-Start. DPLAB_KIND_SEAT_CILIUM=1 runs it.
  it.runIf(process.env.DPLAB_KIND_SEAT_CILIUM === '1')(
    'Cilium provisions in a seat too: its chart from the seat image, kube-proxy replaced, Check reads it',
    async () => {
      const page = learner.page;
      // A seat is sized for one cluster at a time: the learner deletes the iptables one first.
      const iptables = page.locator(`.dplab-ws-bar dplab-cluster-panel[mode="${MODE}"]`);
      await iptables.locator('button', { hasText: /^Delete$/ }).click();
      await expect.poll(() => iptables.getAttribute('data-state'), { timeout: 5 * 60_000, interval: 2_000 }).toBe('absent');
      await page.locator('select[data-action="mode"]').selectOption('cilium');
      // The iptables result no longer applies: a pass below is Cilium's.
      await expect.poll(() => page.locator(`${step('deploy-web')} .dplab-result[data-status]`).count()).toBe(0);
      await startInSeat('cilium');
      expect(await seatNodes()).toEqual([
        `${clusterName('cilium')}-control-plane`,
        `${clusterName('cilium')}-worker`,
        `${clusterName('cilium')}-worker2`,
      ]);
      // The learner's kubectl now points at the seat's Cilium cluster, whose agent replaced kube-proxy.
      await typeIn(
        page,
        'kubectl -n kube-system exec ds/cilium -c cilium-agent -- cilium-dbg status | grep -o "KubeProxyReplacement: *[A-Za-z]*" && echo "KPR-READ-$((40+2))"',
      );
      await expect.poll(() => terminalText(page), { timeout: 120_000, interval: 2_000 }).toContain('KPR-READ-42');
      expect(await terminalText(page)).toMatch(/KubeProxyReplacement: *True/);
      await expect
        .poll(() => page.locator('.dplab-setup').getAttribute('data-state'), { timeout: 5 * 60_000, interval: 2_000 })
        .toBe('done');
      for (const run of await page.locator(`${step('deploy-web')} .dplab-snippets [data-action="run"]`).all()) await run.click();
      // A Run waits for the prompt of the one before (the run queue): type only once the last was sent.
      await expect.poll(() => page.locator(`${shell}[data-queued]`).count(), { timeout: 300_000, interval: 1_000 }).toBe(0);
      await typeIn(page, 'kubectl -n lab-first-service rollout status deploy/web --timeout=300s && echo "CILIUM-ROLLED-OUT-$((40+2))"');
      await expect.poll(() => terminalText(page), { timeout: 320_000, interval: 2_000 }).toContain('CILIUM-ROLLED-OUT-42');
      await page.locator(`${step('deploy-web')} [data-action="check"]`).click();
      const result = page.locator(`${step('deploy-web')} .dplab-result[data-status]:not([data-status="busy"])`);
      await result.waitFor({ timeout: 120_000 });
      expect(await result.getAttribute('data-status'), (await result.textContent()) ?? '').toBe('pass');
      const memory = await seatDocker(['stats', '--no-stream', '--format', '{{.Name}} {{.MemUsage}}']);
      say(`the seat's Cilium cluster, docker stats: ${memory.trim().replace(/\n/g, '; ')}`);
      await screenshot(page, 'kind-portal-5-cilium');
    },
  );

  it('End workshop deletes the seat’s clusters through its runner, then every seat object', async () => {
    const page = instructor.page;
    page.once('dialog', (d) => void d.accept());
    const t = Date.now();
    await page.click('#end');
    await expect.poll(() => page.locator('#lab').textContent(), { timeout: 5 * 60_000, interval: 1_000 }).toContain('ended');
    await expect
      .poll(() => kubectl(['-n', NS, 'get', 'pods,services,secrets', '-l', MANAGED_SELECTOR, '-o', 'name']), {
        timeout: 3 * 60_000,
        interval: 2_000,
      })
      .toBe('');
    say(`End workshop → no seat object left: ${Math.round((Date.now() - t) / 1000)} s`);
    const logs = await kubectl(['-n', NS, 'logs', 'deploy/dplab-portal']);
    expect(logs).not.toContain('may outlive it');
  });

  it('a portal killed mid-workshop comes back and takes the seat pod it left back: the learner’s token names it again', async () => {
    // A new workshop (the last one ended): the Deployment's next pod, with its own code.
    await kubectl(['-n', NS, 'rollout', 'restart', 'deploy/dplab-portal']);
    await kubectl(['-n', NS, 'rollout', 'status', 'deploy/dplab-portal', '--timeout=300s'], 320_000);
    const newCode = /code (\S+)/.exec(await kubectl(['-n', NS, 'logs', 'deploy/dplab-portal']))?.[1];
    expect(newCode).toBeTruthy();
    // A learner joins (through the portal's own address, from inside its pod), and gets a seat pod.
    const join = `fetch('${origin}/portal/api/join', { method: 'POST', headers: { origin: '${origin}', 'content-type': 'application/json' }, body: JSON.stringify({ code: '${newCode}', name: 'Brian' }) }).then(async (r) => console.log(r.status, await r.text()))`;
    const joined = await kubectl(['-n', NS, 'exec', 'deploy/dplab-portal', '--', 'node', '-e', join]);
    expect(joined).toMatch(/^200 /);
    const { seat: left, token: learnerToken } = JSON.parse(joined.slice(4)) as { seat: string; token: string };
    await expect
      .poll(() => kubectl(['-n', NS, 'get', 'pod', seatObjectName(left), '-o', 'jsonpath={.status.phase}']).catch(() => ''), {
        timeout: 3 * 60_000,
        interval: 2_000,
      })
      .toBe('Running');
    // SIGKILL from the node, as a crash or an OOM kill would: no End workshop, no clean-up.
    const portalPod = (
      JSON.parse(await kubectl(['-n', NS, 'get', 'pods', '-l', 'app.kubernetes.io/name=dplab-portal', '-o', 'json'])).items as PodJson[]
    ).find((p) => !p.metadata.deletionTimestamp)!;
    await run('docker', ['exec', portalPod.spec.nodeName!, 'pkill', '-KILL', '-f', 'dplab.mjs portal'], {
      ...engineEnv(),
      timeoutMs: 30_000,
    });
    const t = Date.now();
    await expect
      .poll(
        () => kubectl(['-n', NS, 'get', 'pod', portalPod.metadata.name, '-o', 'jsonpath={.status.containerStatuses[0].restartCount}']),
        { timeout: 2 * 60_000, interval: 1_000 },
      )
      .toBe('1');
    // The container started again in the same pod: its state folder (an emptyDir) kept the workshop.
    const me = `fetch('${origin}/portal/api/me', { headers: { authorization: 'Bearer ${learnerToken}' } }).then(async (r) => console.log(r.status, await r.text()))`;
    await expect
      .poll(() => kubectl(['-n', NS, 'exec', 'deploy/dplab-portal', '--', 'node', '-e', me]).catch((err: Error) => err.message), {
        timeout: 3 * 60_000,
        interval: 2_000,
      })
      .toMatch(new RegExp(`^200 .*"seat":"${left}"`));
    say(`portal SIGKILLed → restarted → its seat taken back, the learner's token working: ${Math.round((Date.now() - t) / 1000)} s`);
    expect(await kubectl(['-n', NS, 'get', 'pod', seatObjectName(left), '-o', 'jsonpath={.status.phase}'])).toBe('Running');
    expect(await kubectl(['-n', NS, 'logs', portalPod.metadata.name])).toContain(`Took back 1 seat(s) an earlier portal left: ${left}.`);
  });
});
