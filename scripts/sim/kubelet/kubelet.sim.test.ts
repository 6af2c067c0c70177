// The kubelet stand-in against the real control plane (etcd, kube-apiserver with Node,RBAC and
// NodeRestriction, controller-manager, scheduler from startControlPlane) and the real kubectl
// and agnhost binaries. One node namespace holds the control plane and the stand-in, like a
// single-node kind cluster; the test process reaches it over a veth from the host.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../base/exec.ts';
import { projectRoot } from '../../base/paths.ts';
import { simBinDir } from '../build.ts';
import { SIM_COMPONENTS } from '../components.ts';
import { startControlPlane, type ControlPlane } from '../control-plane.ts';
import { listNetns } from './cleanup.ts';
import type { KubeletConfigInput } from './config.ts';
import { cidrContains, parseCidr } from './ipam.ts';
import { podNetnsPrefix } from './pod-network.ts';
import { fetchInNetns } from '../../../test/fixtures/netns-fetch.ts';

const NODE = `dplab-kl${process.pid % 100000}`;
const NODE_IP = '10.251.0.2';
const HOST_IP = '10.251.0.1';
const HOST_VETH = `dpkl${process.pid % 100000}`;
const DNS_IP = '10.252.0.10';
const AGNHOST = 'registry.k8s.io/e2e-test-images/agnhost:2.53';

let dir: string;
let cp: ControlPlane;
let kubelet: ChildProcess;
let kubeletLog = '';
const binDir = simBinDir();

async function kubectl(args: string[], input?: string, timeoutMs = 60_000) {
  return run(join(binDir, 'kubectl'), ['--kubeconfig', cp.kubeconfig, ...args], { input, timeoutMs });
}

async function json<T = any>(args: string[]): Promise<T> {
  return JSON.parse((await kubectl([...args, '-o', 'json'])).stdout) as T;
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await sleep(250);
  }
  throw new Error(
    `timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}\n--- kubelet log ---\n${kubeletLog.slice(-3000)}`,
  );
}

let kubeletConfigFile = '';

/** As the provider starts it: `ip netns exec <node> node --import tsx main.ts` (it moves itself back into the host's mount namespace). */
function startKubeletProcess(): ChildProcess {
  const child = spawn(
    'ip',
    [
      'netns',
      'exec',
      NODE,
      process.execPath,
      '--import',
      'tsx',
      join(projectRoot, 'scripts/sim/kubelet/main.ts'),
      '--config',
      kubeletConfigFile,
    ],
    { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (c: Buffer) => (kubeletLog += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (kubeletLog += c.toString()));
  return child;
}

function podRecords(): Array<{ name: string; netns: string; containers: Array<{ pid: number | null }> }> {
  const pods = join(dir, 'node', 'pods');
  return existsSync(pods)
    ? readdirSync(pods)
        .filter((f) => f.endsWith('.json'))
        .map((f) => JSON.parse(readFileSync(join(pods, f), 'utf8')))
    : [];
}

/** Running (a zombie waiting for its reaper counts as gone). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function podManifest(name: string, extra: Record<string, unknown> = {}, container: Record<string, unknown> = {}) {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'demo', labels: { app: name } },
    spec: {
      terminationGracePeriodSeconds: 5,
      containers: [
        {
          name: 'app',
          image: AGNHOST,
          args: ['netexec', '--http-port=8080'],
          ports: [{ name: 'http', containerPort: 8080 }],
          ...container,
        },
      ],
      ...extra,
    },
  });
}

async function apply(manifest: string) {
  // The namespace's default ServiceAccount arrives a moment after the namespace.
  await until('the pod to be accepted', 30_000, async () => (await kubectl(['apply', '-f', '-'], manifest)).exitCode === 0);
}

async function podNamespaces(): Promise<string[]> {
  return (await listNetns()).filter((n) => n.startsWith(podNetnsPrefix(NODE)));
}

const reason =
  process.platform !== 'linux' || process.getuid?.() !== 0
    ? 'needs Linux and root'
    : !existsSync(join(binDir, 'kube-apiserver'))
      ? `no sim binaries in ${binDir} (npm run test:sim builds them)`
      : null;

describe.skipIf(reason !== null)(`kubelet stand-in against the real API server${reason ? ` (skipped: ${reason})` : ''}`, () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dplab-kubelet-'));
    spawnSync('ip', ['netns', 'del', NODE]);
    const sh = (args: string[]) => {
      const r = spawnSync('ip', args, { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr}`);
    };
    sh(['netns', 'add', NODE]);
    sh(['link', 'add', HOST_VETH, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', NODE]);
    sh(['addr', 'add', `${HOST_IP}/24`, 'dev', HOST_VETH]);
    sh(['link', 'set', HOST_VETH, 'up']);
    sh(['-n', NODE, 'link', 'set', 'lo', 'up']);
    sh(['-n', NODE, 'addr', 'add', `${NODE_IP}/24`, 'dev', 'eth0']);
    sh(['-n', NODE, 'link', 'set', 'eth0', 'up']);
    sh(['-n', NODE, 'route', 'add', 'default', 'via', HOST_IP]);
    spawnSync('ip', ['netns', 'exec', NODE, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);

    cp = await startControlPlane({
      dir: join(dir, 'cp'),
      ip: NODE_IP,
      netns: NODE,
      serviceCidr: '10.252.0.0/16',
      podCidr: '10.253.0.0/16',
      binDir,
      extraSans: [NODE],
    });
    const serving = await cp.kubeletServingCert(NODE, NODE_IP);
    const config: KubeletConfigInput = {
      nodeName: NODE,
      nodeIP: NODE_IP,
      netns: NODE,
      kubeconfig: await cp.nodeKubeconfig(NODE),
      binDir,
      stateDir: join(dir, 'node'),
      labels: {},
      clusterDNS: [DNS_IP],
      clusterDomain: 'cluster.local',
      clientCAFile: cp.caFile,
      servingCertFile: serving.cert,
      servingKeyFile: serving.key,
    };
    kubeletConfigFile = join(dir, 'kubelet.json');
    writeFileSync(kubeletConfigFile, JSON.stringify(config));
    kubelet = startKubeletProcess();
    await until('the node to be Ready', 90_000, async () => {
      const node = await json(['get', 'node', NODE]);
      return node.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True') && node.spec?.podCIDR;
    });
    await kubectl(['create', 'namespace', 'demo']);
  });

  afterAll(async () => {
    if (process.env.DPLAB_KUBELET_TEST_LOG) writeFileSync(process.env.DPLAB_KUBELET_TEST_LOG, kubeletLog);
    if (kubelet && kubelet.exitCode === null) {
      kubelet.kill('SIGTERM');
      await Promise.race([new Promise((r) => kubelet.once('exit', r)), sleep(20_000)]);
    }
    await cp?.stop().catch(() => {});
    spawnSync('ip', ['netns', 'del', NODE]);
    spawnSync('ip', ['link', 'del', HOST_VETH]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers the Node: labels, addresses, kubelet endpoint, Ready, and renews its Lease', async () => {
    const node = await json(['get', 'node', NODE]);
    expect(node.metadata.labels).toMatchObject({ 'kubernetes.io/hostname': NODE, 'kubernetes.io/os': 'linux' });
    expect(node.status.addresses).toEqual([
      { type: 'InternalIP', address: NODE_IP },
      { type: 'Hostname', address: NODE },
    ]);
    expect(node.status.daemonEndpoints.kubeletEndpoint.Port).toBe(10250);
    expect(node.status.nodeInfo.kubeletVersion).toBe('v1.35.0');
    expect(node.status.nodeInfo.osImage).toMatch(/kubelet stand-in/);
    expect(cidrContains(parseCidr('10.253.0.0/16'), node.spec.podCIDR.split('/')[0])).toBe(true);
    const lease1 = await json(['-n', 'kube-node-lease', 'get', 'lease', NODE]);
    expect(lease1.spec.holderIdentity).toBe(NODE);
    const renewed = await until('the lease to be renewed', 25_000, async () => {
      const l = await json(['-n', 'kube-node-lease', 'get', 'lease', NODE]);
      return l.spec.renewTime !== lease1.spec.renewTime ? l : null;
    });
    expect(Date.parse(renewed.spec.renewTime)).toBeGreaterThan(Date.parse(lease1.spec.renewTime));
  });

  it('runs a pod: Pending → Running and Ready with an IP from the node’s pod CIDR, serving from agnhost; deletion removes it all', async () => {
    await apply(podManifest('web', {}, { readinessProbe: { httpGet: { path: '/hostname', port: 'http' }, periodSeconds: 1 } }));
    const pod = await until('web to be Ready', 60_000, async () => {
      const p = await json(['-n', 'demo', 'get', 'pod', 'web']);
      return p.status.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True') ? p : null;
    });
    const node = await json(['get', 'node', NODE]);
    expect(pod.status.phase).toBe('Running');
    expect(pod.status.hostIP).toBe(NODE_IP);
    expect(cidrContains(parseCidr(node.spec.podCIDR), pod.status.podIP)).toBe(true);
    expect(pod.status.containerStatuses[0]).toMatchObject({ name: 'app', ready: true, restartCount: 0, state: { running: {} } });
    // Which agnhost ran in place of the requested tag is on record.
    const agnhost = SIM_COMPONENTS.find((c) => c.name === 'agnhost')!.version;
    expect(pod.status.containerStatuses[0].imageID).toBe(`dplab-sim://agnhost@${agnhost} (requested ${AGNHOST})`);
    // Real agnhost netexec answers on the pod's address, from the node.
    expect(fetchInNetns(NODE, `http://${pod.status.podIP}:8080/hostname`, 10_000)).toBe('web');
    // kubectl logs, through the API server and the exec server's /containerLogs.
    const logs = await kubectl(['-n', 'demo', 'logs', 'web']);
    expect(logs.stdout).toMatch(/Started HTTP server on port 8080/);
    const [podNs] = await podNamespaces();
    // A real namespace to everyone on the host, not just to the stand-in (mount propagation).
    expect(spawnSync('ip', ['-n', podNs, '-4', '-o', 'addr', 'show', 'eth0'], { encoding: 'utf8' }).stdout).toContain(
      `${pod.status.podIP}/24`,
    );

    await kubectl(['-n', 'demo', 'delete', 'pod', 'web', '--wait=true', '--timeout=60s']);
    expect((await kubectl(['-n', 'demo', 'get', 'pod', 'web', '--ignore-not-found', '-o', 'name'])).stdout.trim()).toBe('');
    await until('the pod namespace to be gone', 10_000, async () => (await podNamespaces()).length === 0);
    expect(spawnSync('ip', ['-n', NODE, '-o', 'link'], { encoding: 'utf8' }).stdout).not.toMatch(/veth/);
    const events = await json(['-n', 'demo', 'get', 'events', '--field-selector', 'involvedObject.name=web']);
    const reasons = events.items.map((e: any) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['Pulled', 'Created', 'Started', 'Killing']));
    // The sim builds agnhost 2.53, the tag the labs name: no "not tag" note.
    expect(events.items.find((e: any) => e.reason === 'Pulled').message).toMatch(/runs the built agnhost 2\.53\)$/);
  });

  it('keeps a pod whose readiness probe fails out of the Service’s ready endpoints', async () => {
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'pair', namespace: 'demo' },
        spec: { selector: { tier: 'pair' }, ports: [{ port: 80, targetPort: 8080 }] },
      }),
    );
    const withTier = (name: string, probePort: number) => {
      const m = JSON.parse(podManifest(name, {}, { readinessProbe: { httpGet: { path: '/', port: probePort }, periodSeconds: 1 } }));
      m.metadata.labels.tier = 'pair';
      return JSON.stringify(m);
    };
    await apply(withTier('good', 8080));
    await apply(withTier('bad', 8081));
    const slices = await until('the EndpointSlice to list both pods', 60_000, async () => {
      const s = await json(['-n', 'demo', 'get', 'endpointslices', '-l', 'kubernetes.io/service-name=pair']);
      const eps = s.items.flatMap((i: any) => i.endpoints ?? []);
      return eps.length === 2 && eps.some((e: any) => e.conditions.ready) ? eps : null;
    });
    const byPod = Object.fromEntries(slices.map((e: any) => [e.targetRef.name, e.conditions.ready]));
    expect(byPod).toEqual({ good: true, bad: false });
    const bad = await json(['-n', 'demo', 'get', 'pod', 'bad']);
    expect(bad.status.phase).toBe('Running');
    expect(bad.status.conditions.find((c: any) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady' });
    const events = await json(['-n', 'demo', 'get', 'events', '--field-selector', 'involvedObject.name=bad,reason=Unhealthy']);
    expect(events.items[0]?.message).toMatch(/Readiness probe failed: .*8081/);
    await kubectl(['-n', 'demo', 'delete', 'pod', 'good', 'bad', '--wait=true', '--timeout=60s']);
  });

  it('kubectl exec runs in the pod’s namespaces through the API server: hostname, resolv.conf, stdin, exit code, tty', async () => {
    await apply(podManifest('shell'));
    await until('shell to be Running', 60_000, async () => (await json(['-n', 'demo', 'get', 'pod', 'shell'])).status.phase === 'Running');
    expect((await kubectl(['-n', 'demo', 'exec', 'shell', '--', 'hostname'])).stdout.trim()).toBe('shell');
    const resolv = (await kubectl(['-n', 'demo', 'exec', 'shell', '--', 'cat', '/etc/resolv.conf'])).stdout;
    expect(resolv).toContain(`nameserver ${DNS_IP}`);
    expect(resolv).toContain('search demo.svc.cluster.local svc.cluster.local cluster.local');
    expect((await kubectl(['-n', 'demo', 'exec', '-i', 'shell', '--', 'sh', '-c', 'tr a-z A-Z'], 'hello through stdin\n')).stdout).toBe(
      'HELLO THROUGH STDIN\n',
    );
    const failed = await kubectl(['-n', 'demo', 'exec', 'shell', '--', 'sh', '-c', 'echo oops >&2; exit 7']).catch((e) => e);
    expect(failed.exitCode).toBe(7);
    expect(failed.stderr).toContain('oops');
    // A terminal: `script` gives kubectl a pty (sized 30x100 here), so -t is honoured, the
    // command sees a tty, and kubectl's size reaches the pod's pty through the resize stream.
    const tty = spawnSync(
      'script',
      [
        '-qec',
        `stty rows 30 cols 100; ${join(binDir, 'kubectl')} --kubeconfig ${cp.kubeconfig} -n demo exec -it shell -- sh -c 'tty; sleep 1; stty size'`,
        '/dev/null',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(tty.stdout).toMatch(/\/dev\/pts\/\d+/);
    // (The pty may echo a stray byte from script's closed stdin before it, as ^@.)
    expect(tty.stdout).toMatch(/(^|\^@)30 100\r?$/m);
    // /agnhost (the image's entrypoint) maps to the built binary; it reads the pod's resolv.conf.
    expect((await kubectl(['-n', 'demo', 'exec', 'shell', '--', '/agnhost', 'dns-suffix'])).stdout.trim()).toBe(
      'demo.svc.cluster.local,svc.cluster.local,cluster.local',
    );
  });

  it('the exec server refuses a client without the API server’s client certificate', async () => {
    const pod = await json(['-n', 'demo', 'get', 'pod', 'shell']);
    const outcome = await new Promise<string>((resolve) => {
      const req = https.request(
        { host: NODE_IP, port: 10250, path: `/exec/demo/shell/app?command=hostname&output=1`, method: 'POST', rejectUnauthorized: false },
        (res) => resolve(`HTTP ${res.statusCode}`),
      );
      req.on('error', (err) => resolve(`error ${err.message}`));
      req.end();
    });
    expect(pod.metadata.name).toBe('shell');
    expect(outcome).toMatch(/^error .*(certificate|handshake|alert|socket hang up|ECONNRESET)/i);
  });

  it('refuses an image it cannot run with a clear event and a Waiting status', async () => {
    await apply(podManifest('nginx', {}, { image: 'nginx:1.27', args: [] }));
    const pod = await until('nginx to report its container as Waiting', 60_000, async () => {
      const p = await json(['-n', 'demo', 'get', 'pod', 'nginx']);
      return p.status.containerStatuses?.[0]?.state?.waiting?.reason === 'ErrImageNeverPull' ? p : null;
    });
    expect(pod.status.phase).toBe('Pending');
    expect(pod.status.containerStatuses[0].state.waiting.message).toMatch(/runs only agnhost/);
    const events = await until('the refusal event', 10_000, async () => {
      const e = await json(['-n', 'demo', 'get', 'events', '--field-selector', 'involvedObject.name=nginx,reason=ErrImageNeverPull']);
      return e.items.length ? e.items : null;
    });
    expect(events[0]).toMatchObject({ type: 'Warning', source: { component: 'kubelet', host: NODE } });
    expect(events[0].message).toMatch(/sim provider runs only agnhost.*"nginx:1.27"/);
    expect(await podNamespaces()).toHaveLength(1); // only "shell": no sandbox for the refused pod
    await kubectl(['-n', 'demo', 'delete', 'pod', 'nginx', '--wait=true', '--timeout=60s']);
  });

  it('stops a container that ignores SIGTERM with SIGKILL after the grace period', async () => {
    await apply(
      podManifest(
        'stubborn',
        { terminationGracePeriodSeconds: 2 },
        { command: ['sh', '-c', 'trap "" TERM; while true; do sleep 0.2; done'], args: [] },
      ),
    );
    await until(
      'stubborn to be Running',
      60_000,
      async () => (await json(['-n', 'demo', 'get', 'pod', 'stubborn'])).status.phase === 'Running',
    );
    const pid = podRecords().find((r) => r.name === 'stubborn')!.containers[0].pid!;
    const started = Date.now();
    await kubectl(['-n', 'demo', 'delete', 'pod', 'stubborn', '--wait=true', '--timeout=60s']);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(2_000);
    expect(took).toBeLessThan(10_000);
    expect(alive(pid)).toBe(false);
  });

  it('restarts a container whose liveness probe fails', async () => {
    await apply(podManifest('sick', {}, { livenessProbe: { tcpSocket: { port: 9999 }, periodSeconds: 1, failureThreshold: 2 } }));
    const pod = await until('sick to restart', 60_000, async () => {
      const p = await json(['-n', 'demo', 'get', 'pod', 'sick']);
      return p.status.containerStatuses?.[0]?.restartCount >= 1 ? p : null;
    });
    // Killed with SIGTERM, agnhost exits on its own (code 0: "Completed"); the run is the last state.
    expect(pod.status.containerStatuses[0].lastState.terminated).toMatchObject({
      reason: expect.stringMatching(/^(Completed|Error)$/),
      finishedAt: expect.any(String),
    });
    const events = await json(['-n', 'demo', 'get', 'events', '--field-selector', 'involvedObject.name=sick,reason=Killing']);
    expect(events.items.map((e: any) => e.message)).toContain('Container app failed liveness probe, will be restarted');
    // Each run has its own log: --previous reads the killed one.
    expect((await kubectl(['-n', 'demo', 'logs', 'sick', '--previous'])).stdout).toMatch(/Started HTTP server on port 8080/);
    expect((await kubectl(['-n', 'demo', 'logs', 'sick', '--tail=1'])).stdout.split('\n').filter(Boolean).length).toBeLessThanOrEqual(1);
    await kubectl(['-n', 'demo', 'delete', 'pod', 'sick', '--wait=true', '--timeout=60s']);
  });

  it('after a crash (SIGKILL), the next start removes the old sandbox and runs the pod again', async () => {
    const before = podRecords().find((r) => r.name === 'shell')!;
    const oldPid = before.containers[0].pid!;
    // The stand-in proper is the child of the process the provider started (see main.ts).
    // (tsx's esbuild service is a child too: pick the one running main.ts.)
    const inner = Number(
      spawnSync('pgrep', ['-P', String(kubelet.pid), '-f', 'kubelet/main.ts'], { encoding: 'utf8' })
        .stdout.trim()
        .split('\n')[0],
    );
    expect(inner).toBeGreaterThan(1);
    process.kill(inner, 'SIGKILL');
    await new Promise((r) => kubelet.once('exit', r));
    expect(alive(oldPid)).toBe(true); // its pods outlive it, as after a real crash
    kubelet = startKubeletProcess();
    const after = await until('shell to run in a new sandbox', 60_000, async () => {
      const r = podRecords().find((x) => x.name === 'shell');
      return r && r.containers[0].pid && r.containers[0].pid !== oldPid ? r : null;
    });
    expect(alive(oldPid)).toBe(false);
    expect(await podNamespaces()).toEqual([after.netns]);
    expect(kubeletLog).toMatch(/stopping the exec server an earlier run left/);
    await until('shell to be Ready again', 30_000, async () =>
      (await json(['-n', 'demo', 'get', 'pod', 'shell'])).status.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'),
    );
    expect((await kubectl(['-n', 'demo', 'exec', 'shell', '--', 'hostname'])).stdout.trim()).toBe('shell');
  });

  it('on SIGTERM removes its pods’ namespaces, processes and state', async () => {
    expect(await podNamespaces()).toHaveLength(1);
    const podPid = podRecords()[0].containers[0].pid!;
    const execServerPid = Number(readFileSync(join(dir, 'node', 'exec-server.pid'), 'utf8'));
    expect(alive(execServerPid)).toBe(true);
    kubelet.kill('SIGTERM');
    const code = await new Promise((r) => kubelet.once('exit', r));
    expect(code).toBe(0);
    expect(await podNamespaces()).toEqual([]);
    expect(alive(podPid)).toBe(false);
    expect(spawnSync('ip', ['-n', NODE, '-o', 'link'], { encoding: 'utf8' }).stdout).not.toMatch(/veth/);
    expect(existsSync(join(dir, 'node', 'pods'))).toBe(false);
    expect(alive(execServerPid)).toBe(false);
  });
});
