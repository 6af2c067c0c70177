/**
 * The Kubernetes seat backend against the REAL kube-apiserver, etcd, kube-controller-manager and
 * kube-scheduler of Kubernetes 1.35.0 (built from their Go modules by scripts/sim/, started here
 * as a bare control plane on 127.0.0.1 on free ports with its own data folder, no nodes of the
 * sim provider):
 *
 * - the shipped manifests are created with `kubectl create --validate=strict` (server-side
 *   field validation: an unknown or misspelt field fails), and the seats are then made with the
 *   portal's own ServiceAccount token, so the shipped Role is proven to be enough and no more;
 * - the API server's admission and validation accept every seat object the backend sends
 *   (fieldValidation=Strict) and refuse broken ones;
 * - a seat walks pending → ready → deleted.
 *
 * What is played by the test, plainly: no kubelet or container runtime runs here, so no
 * container starts. The test registers a Node object (so the real scheduler binds the seat pod)
 * and then writes the pod's status through the API the way a kubelet would (Running, Ready);
 * the seat's runner is a real `dplab serve` started on 127.0.0.2:4321 with the seat's token and
 * `--allow-host <the seat Service's DNS name>`, reached by the backend with the Service's name
 * as Host (only the socket's address is redirected). Its clusters are the kind test doubles, so
 * "delete the seat's clusters first" shows up as real `kind delete cluster` calls. After the
 * backend deletes the pod, the test finishes the deletion as a kubelet does (grace period 0).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../scripts/base/paths.ts';
import { KubernetesSeatBackend } from '../../scripts/portal/kubernetes-backend.ts';
import { clientNodeSeatApi } from '../../scripts/portal/seat-kube-api.ts';
import { seatHostName, seatPod, seatSecret, seatService, type KubernetesSeatConfig } from '../../scripts/portal/seat-objects.ts';
import { httpTransport } from '../../scripts/portal/seat-client.ts';
import { simBinDir } from '../../scripts/sim/build.ts';
import { startControlPlane, type ControlPlane } from '../../scripts/sim/control-plane.ts';
import { MODES } from '../../scripts/wire/modes.ts';
import { MANIFEST_DIR, shippedManifests } from '../fixtures/portal-manifests.ts';
import { useDoubles } from '../fixtures/doubles.ts';

const binDir = simBinDir();
const reason =
  process.platform !== 'linux' || process.getuid?.() !== 0
    ? 'needs Linux and root'
    : !existsSync(join(binDir, 'kube-apiserver'))
      ? `no kube-apiserver in ${binDir} (npm run test:sim builds it)`
      : null;

const NS = shippedManifests().find(({ obj }) => obj.kind === 'Namespace')!.obj.metadata.name;
const SA = shippedManifests().find(({ obj }) => obj.kind === 'ServiceAccount')!.obj.metadata.name;
const RUNNER_ADDRESS = '127.0.0.2';
const RUNNER_PORT = 4321;
const NODE = 'seat-node-1';

let dir: string;
let cp: ControlPlane;
let admin: CoreV1Api;
let portalKc: KubeConfig;
const runners: ChildProcess[] = [];

function kubectl(args: string[]): string {
  return kubectlIn(args);
}

function kubectlIn(args: string[], input?: string): string {
  const r = spawnSync(join(binDir, 'kubectl'), ['--kubeconfig', cp.kubeconfig, ...args], { encoding: 'utf8', timeout: 60_000, input });
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined | null | false>): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await sleep(250);
  }
}

/** A real `dplab serve` answering as the seat's Service name, with the seat's token. */
async function startSeatRunner(id: string, token: string, env: Record<string, string>): Promise<ChildProcess> {
  const site = mkdtempSync(join(dir, 'site-'));
  writeFileSync(join(site, 'index.html'), '<h1>seat</h1>');
  const child = spawn(
    process.execPath,
    [
      join(projectRoot, 'scripts', 'dplab.mjs'),
      'serve',
      '--host',
      RUNNER_ADDRESS,
      '--port',
      String(RUNNER_PORT),
      '--allow-host',
      seatHostName(id, NS),
    ],
    {
      cwd: projectRoot,
      env: { ...process.env, ...env, DPLAB_TOKEN: token, DPLAB_DIST: site, DPLAB_SHELL_NORC: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  runners.push(child);
  let log = '';
  child.stdout!.on('data', (d) => (log += d));
  child.stderr!.on('data', (d) => (log += d));
  // It prints a loopback link (127.0.0.1) whichever loopback address it bound.
  await until('the seat runner to listen', 30_000, async () => {
    if (child.exitCode !== null) throw new Error(`runner exited: ${log}`);
    return new RegExp(`Dataplane Lab: http://[^/]+:${RUNNER_PORT}/`).test(log);
  });
  return child;
}

async function stopRunner(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await Promise.race([new Promise((r) => child.once('exit', r)), sleep(5_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** What a kubelet reports once both containers run and the runner's readiness probe passes. */
async function reportRunningAndReady(name: string) {
  const pod = await admin.readNamespacedPod({ name, namespace: NS });
  const now = new Date();
  pod.status = {
    ...pod.status,
    phase: 'Running',
    hostIP: '10.0.0.11',
    podIP: '10.244.1.7',
    startTime: now,
    conditions: [
      ...(pod.status?.conditions ?? []).filter((c) => c.type === 'PodScheduled'),
      { type: 'Initialized', status: 'True', lastTransitionTime: now },
      { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
      { type: 'Ready', status: 'True', lastTransitionTime: now },
    ],
    containerStatuses: pod.spec!.containers.map((c) => ({
      name: c.name,
      image: c.image!,
      imageID: `${c.image}@sha256:${'0'.repeat(64)}`,
      ready: true,
      started: true,
      restartCount: 0,
      state: { running: { startedAt: now } },
    })),
  };
  await admin.replaceNamespacedPodStatus({ name, namespace: NS, body: pod });
}

describe.skipIf(reason !== null)(`Kubernetes seats on the real kube-apiserver 1.35${reason ? ` (skipped: ${reason})` : ''}`, () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dplab-k8s-seats-'));
    cp = await startControlPlane({
      dir: join(dir, 'cp'),
      serviceCidr: '10.250.0.0/16',
      podCidr: '10.251.0.0/16',
      binDir,
      clusterName: 'dplab-seats',
    });
    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfig);
    admin = kc.makeApiClient(CoreV1Api);

    // The operator's install, as the guide says: the namespace, then everything else.
    kubectl(['create', '--validate=strict', '-f', join(MANIFEST_DIR, 'namespace.yaml')]);
    const rest = shippedManifests().filter(({ file }) => file !== 'namespace.yaml');
    for (const file of new Set(rest.map((m) => m.file))) kubectl(['create', '--validate=strict', '-f', join(MANIFEST_DIR, file)]);
    // The ServiceAccount admission plugin needs the namespace's `default` account (the controller makes it).
    await until(
      'the default ServiceAccount',
      60_000,
      async () => (await admin.readNamespacedServiceAccount({ name: 'default', namespace: NS })).metadata?.uid,
    );

    // The portal's identity: a token of its ServiceAccount, nothing of the admin's.
    const token = kubectl(['create', 'token', SA, '-n', NS, '--duration', '1h']).trim();
    const cluster = kc.getCurrentCluster()!;
    portalKc = new KubeConfig();
    portalKc.loadFromOptions({
      clusters: [{ name: 'sim', server: cluster.server, caFile: cp.caFile }],
      users: [{ name: 'portal', token }],
      contexts: [{ name: 'portal', cluster: 'sim', user: 'portal', namespace: NS }],
      currentContext: 'portal',
    });
  }, 300_000);

  afterAll(async () => {
    for (const r of runners) await stopRunner(r);
    await cp?.stop().catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const config = (): KubernetesSeatConfig => ({ namespace: NS, runnerImage: 'registry.example.com/dataplane-lab/runner:0.1.0' });

  it('creates every shipped manifest (strict validation), and the Role lets the portal’s ServiceAccount do what the backend needs', () => {
    for (const { obj } of shippedManifests()) {
      const ns = obj.kind === 'Namespace' ? [] : ['-n', obj.metadata.namespace!];
      const stored = JSON.parse(
        kubectl([
          'get',
          obj.kind.toLowerCase() + (obj.apiVersion.includes('/') ? `.${obj.apiVersion.split('/')[0]}` : ''),
          obj.metadata.name,
          ...ns,
          '-o',
          'json',
        ]),
      );
      expect(stored.metadata.labels, `${obj.kind}`).toMatchObject(obj.metadata.labels ?? {});
    }
    expect(kubectl(['auth', 'can-i', 'create', 'pods', '-n', NS, '--as', `system:serviceaccount:${NS}:${SA}`]).trim()).toBe('yes');
    expect(kubectl(['auth', 'can-i', 'get', 'pods/status', '-n', NS, '--as', `system:serviceaccount:${NS}:${SA}`]).trim()).toBe('yes');
  });

  it('the portal’s ServiceAccount can do nothing outside its Role: no pods elsewhere, no configmaps, no pod updates', async () => {
    const core = portalKc.makeApiClient(CoreV1Api);
    const pod = seatPod({ id: 'zz', runnerToken: 'x'.repeat(32), warm: [] }, { ...config(), namespace: 'default' });
    await expect(core.createNamespacedPod({ namespace: 'default', body: pod })).rejects.toMatchObject({ code: 403 });
    await expect(core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'x' } } })).rejects.toMatchObject({ code: 403 });
    await expect(core.listNamespacedSecret({ namespace: NS })).rejects.toMatchObject({ code: 403 });
  });

  it('the API server accepts the seat objects exactly as built (strict, dry run) and refuses a misspelt field or a bad quantity', async () => {
    // Straight from the builders as JSON, past no client library (client-node's serializer
    // would silently drop a field its types do not know, hiding it from the server).
    const spec = { id: 'dry1', runnerToken: 'x'.repeat(32), warm: ['iptables' as const] };
    const owner = { apiVersion: 'v1', kind: 'Pod', name: 'dplab-seat-dry1', uid: '6f1c3a52-4a8e-4c55-9d43-2f2c9a0f6a11' };
    for (const obj of [seatPod(spec, config()), seatSecret(spec, config(), owner), seatService(spec, config(), owner)]) {
      expect(kubectlIn(['create', '--dry-run=server', '--validate=strict', '-o', 'name', '-f', '-'], JSON.stringify(obj))).toMatch(
        /created|dplab-seat-dry1/,
      );
    }
    const typo = seatPod({ id: 'bad1', runnerToken: 'x'.repeat(32), warm: [] }, config()) as V1Pod & {
      spec: { containers: Record<string, unknown>[] };
    };
    typo.spec.containers[0].imagePulPolicy = 'Always';
    expect(() => kubectlIn(['create', '--validate=strict', '-f', '-'], JSON.stringify(typo))).toThrow(
      /unknown field "spec.containers\[0\].imagePulPolicy"/,
    );
    const api = clientNodeSeatApi(portalKc);
    const quantity = seatPod({ id: 'bad2', runnerToken: 'x'.repeat(32), warm: [] }, config());
    quantity.spec!.containers[1].resources!.limits!.memory = 'three gigs';
    await expect(api.create('Pod', NS, quantity)).rejects.toThrow(/HTTP 400/);
    const privileged = seatPod({ id: 'bad3', runnerToken: 'x'.repeat(32), warm: [] }, { ...config(), namespace: 'default' });
    // Pod Security: `default` enforces nothing here, so prove the label does the work on a restricted namespace.
    kubectl(['create', 'namespace', 'restricted']);
    kubectl(['label', 'namespace', 'restricted', 'pod-security.kubernetes.io/enforce=baseline']);
    privileged.metadata!.namespace = 'restricted';
    expect(() => kubectlIn(['create', '-f', '-'], JSON.stringify(privileged))).toThrow(
      /violates PodSecurity "baseline:latest".*privileged/,
    );
    expect((await admin.listNamespacedPod({ namespace: NS, labelSelector: 'dplab.io/seat' })).items).toEqual([]);
  });

  it('walks one seat pending → ready → deleted through the real API server and scheduler', async () => {
    const doubles = useDoubles({ rules: [{ tool: 'kind', match: '^delete cluster', stderr: 'Deleting cluster ...\n' }] });
    const id = 's1';
    const name = `dplab-seat-${id}`;
    const runnerToken = randomBytes(24).toString('base64url');
    const log: string[] = [];
    const backend = new KubernetesSeatBackend({
      config: config(),
      api: clientNodeSeatApi(portalKc),
      transport: httpTransport(() => ({ hostname: RUNNER_ADDRESS, port: RUNNER_PORT })),
      log: (l) => log.push(l),
    });

    const created = await backend.create({ id, runnerToken, warm: [] });
    expect(created.phase).toBe('pending');
    const [pod, svc, secret] = await Promise.all([
      admin.readNamespacedPod({ name, namespace: NS }),
      admin.readNamespacedService({ name, namespace: NS }),
      admin.readNamespacedSecret({ name, namespace: NS }),
    ]);
    // What admission made of them: the pod kept both containers, privileged dind included; the
    // Service got a ClusterIP from the range; the Secret holds the token, owned by the pod.
    expect(pod.spec!.containers.map((c) => c.name)).toEqual(['runner', 'dind']);
    expect(pod.spec!.containers[1].securityContext?.privileged).toBe(true);
    expect(svc.spec!.clusterIP).toMatch(/^10\.250\./);
    expect(Buffer.from(secret.data!.token, 'base64').toString()).toBe(runnerToken);
    for (const o of [svc, secret])
      expect(o.metadata!.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata!.uid }]);
    expect(await backend.create({ id, runnerToken, warm: [] })).toMatchObject({ phase: 'pending' });

    // Pending, in the real scheduler's words: there is no node yet.
    const waiting = await until('the scheduler to report the seat unschedulable', 60_000, async () => {
      const s = await backend.status(id);
      return s.message?.startsWith('Waiting for a node with room') ? s : null;
    });
    const scheduled = (await admin.readNamespacedPod({ name, namespace: NS })).status!.conditions!.find((c) => c.type === 'PodScheduled')!;
    expect(scheduled).toMatchObject({ status: 'False', reason: 'Unschedulable' });
    expect(waiting).toEqual({
      id,
      phase: 'pending',
      message: `Waiting for a node with room for the seat: ${scheduled.message!.replace(/\.+$/, '')}.`,
    });

    // A node with room appears (registered as a kubelet would); the real scheduler binds the pod.
    await admin.createNode({ body: { metadata: { name: NODE, labels: { 'kubernetes.io/hostname': NODE } } } });
    // The node lifecycle controller writes the same object meanwhile: re-read on a conflict, as a kubelet does.
    await until('the node status to be written', 30_000, async () => {
      const node = await admin.readNode({ name: NODE });
      node.status = {
        capacity: { cpu: '16', memory: '64Gi', pods: '110' },
        allocatable: { cpu: '16', memory: '64Gi', pods: '110' },
        conditions: [
          { type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: new Date(), lastTransitionTime: new Date() },
        ],
        addresses: [{ type: 'InternalIP', address: '10.0.0.11' }],
      };
      await admin.replaceNodeStatus({ name: NODE, body: node });
      return true;
    });
    await until(
      'the scheduler to bind the seat pod',
      90_000,
      async () => (await admin.readNamespacedPod({ name, namespace: NS })).spec?.nodeName === NODE,
    );
    const starting = await backend.status(id);
    expect(starting.phase).toBe('pending');
    expect(starting.message).toMatch(/^Starting the seat/);

    // The kubelet's part: containers running, Ready. The runner is not answering yet.
    await reportRunningAndReady(name);
    expect(await backend.status(id)).toEqual({
      id,
      phase: 'pending',
      message: 'The seat pod is Ready, but its runner does not answer /api/health yet.',
    });

    // The seat's runner comes up, answering only to the Service's name.
    await startSeatRunner(id, runnerToken, doubles.env);
    const host = `${seatHostName(id, NS)}:4321`;
    expect(await backend.status(id)).toEqual({ id, phase: 'ready', endpoint: { url: `http://${host}`, host } });
    expect((await backend.list()).map((s) => `${s.id} ${s.phase}`)).toEqual([`${id} ready`]);

    // Delete: the clusters first, through the runner (it ran kind delete for each mode), then the objects.
    await backend.delete(id);
    const deletes = doubles.commandLines().filter((l) => l.startsWith('kind delete cluster'));
    expect(deletes.map((l) => l.split(' ')[4])).toEqual(MODES.map((m) => `dplab-${m}`));
    const terminating = await admin.readNamespacedPod({ name, namespace: NS });
    expect(terminating.metadata!.deletionTimestamp).toBeTruthy();
    expect(await backend.status(id)).toEqual({ id, phase: 'deleted', message: 'The seat is being deleted (its pod is terminating).' });
    await expect(admin.readNamespacedService({ name, namespace: NS })).rejects.toMatchObject({ code: 404 });
    await expect(admin.readNamespacedSecret({ name, namespace: NS })).rejects.toMatchObject({ code: 404 });
    // The kubelet's part of a deletion: the containers stopped, the pod object goes.
    await admin.deleteNamespacedPod({ name, namespace: NS, gracePeriodSeconds: 0 });
    await until('the pod to be gone', 30_000, async () => (await backend.status(id)).message === undefined);
    expect(await backend.status(id)).toEqual({ id, phase: 'deleted' });
    await backend.delete(id);
    expect(log.filter((l) => l.includes('outlive'))).toEqual([]);
  });

  it('lets the garbage collector take a seat’s Service and Secret when its pod goes', async () => {
    const backend = new KubernetesSeatBackend({ config: config(), api: clientNodeSeatApi(portalKc) });
    await backend.create({ id: 'gc1', runnerToken: randomBytes(24).toString('base64url'), warm: [] });
    expect((await admin.readNamespacedService({ name: 'dplab-seat-gc1', namespace: NS })).metadata!.ownerReferences![0].name).toBe(
      'dplab-seat-gc1',
    );
    expect((await admin.readNamespacedSecret({ name: 'dplab-seat-gc1', namespace: NS })).metadata!.ownerReferences![0].name).toBe(
      'dplab-seat-gc1',
    );
    await admin.deleteNamespacedPod({ name: 'dplab-seat-gc1', namespace: NS, gracePeriodSeconds: 0 });
    await until('the garbage collector to delete the Service and the Secret', 90_000, async () => {
      const svc = await admin
        .readNamespacedService({ name: 'dplab-seat-gc1', namespace: NS })
        .catch((e: { code?: number }) => (e.code === 404 ? null : Promise.reject(e)));
      const sec = await admin
        .readNamespacedSecret({ name: 'dplab-seat-gc1', namespace: NS })
        .catch((e: { code?: number }) => (e.code === 404 ? null : Promise.reject(e)));
      return !svc && !sec;
    });
    expect((await backend.list()).map((seat) => seat.id)).not.toContain('gc1');
  });
});
