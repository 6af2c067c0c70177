/**
 * A sim cluster's life: the steps the sim provider runs in order (network, control plane,
 * kubelet stand-ins, pod routes, kube-proxy, CoreDNS) and its removal. Everything it starts is a
 * detached process with a pidfile under the cluster's state folder, and everything it makes is
 * found again by name, so `dplab down` in another process, or the next start after a crash,
 * removes it all.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CommandError, run, TIMEOUT_FACTOR, type RunOptions } from '../base/exec.ts';
import { DplabError } from '../base/errors.ts';
import { projectRoot } from '../base/paths.ts';
import { componentVersions } from './components.ts';
import { startControlPlane, CONTROL_PLANE_DAEMONS, type ControlPlane } from './control-plane.ts';
import { ensureLeaf, writeKubeconfig } from './certs.ts';
import type { SimLayout, SimNode } from './layout.ts';
import { kubeProxyAddon } from './kube-proxy-addon.ts';
import { addPodRoutes, createNodeNetwork, deleteNodeNetwork, inNode } from './network.ts';
import { daemonAlive, logTail, startDaemon, stopAll } from './processes.ts';

/** What `cluster.json` in the state folder says: its presence means "this sim cluster exists". */
export interface SimClusterRecord {
  provider: 'sim';
  mode: string;
  name: string;
  createdAt: string;
  apiServerUrl?: string;
  binDir: string;
  nodes: { name: string; ip: string; role: string }[];
  components: Record<string, string>;
  /** Set by the last provisioning step: a cluster without it was left half-made (crash) and is not reused. */
  complete?: boolean;
}

const recordPath = (layout: SimLayout) => join(layout.dir, 'cluster.json');
const cpDir = (layout: SimLayout) => join(layout.dir, 'control-plane');

export function readSimRecord(layout: SimLayout): SimClusterRecord | null {
  try {
    return JSON.parse(readFileSync(recordPath(layout), 'utf8')) as SimClusterRecord;
  } catch {
    return null;
  }
}

export function writeRecord(layout: SimLayout, patch: Partial<SimClusterRecord>): void {
  const now = readSimRecord(layout) ?? {
    provider: 'sim' as const,
    mode: layout.mode,
    name: layout.name,
    createdAt: new Date().toISOString(),
    binDir: '',
    nodes: layout.nodes.map((n) => ({ name: n.name, ip: n.ip, role: n.role })),
    components: componentVersions(),
  };
  mkdirSync(layout.dir, { recursive: true });
  writeFileSync(recordPath(layout), `${JSON.stringify({ ...now, ...patch }, null, 2)}\n`);
}

/** Live control planes of this process' runs (the node and proxy steps make certificates with it). */
const controlPlanes = new Map<string, ControlPlane>();

// Bounds here follow DPLAB_TIMEOUT_FACTOR like every other: in the QEMU guest (test:ipvs) an
// `apply` of kube-proxy's DaemonSet once took longer than a fixed 30 s while the host was busy.
const kubectl = (binDir: string, kubeconfig: string, args: readonly string[], opts?: RunOptions) =>
  run(join(binDir, 'kubectl'), ['--kubeconfig', kubeconfig, ...args], { timeoutMs: 30_000 * TIMEOUT_FACTOR, ...opts });

/** Poll until `probe` returns a value; the error names what was awaited and what was last seen. */
async function until<T>(
  what: string,
  baseTimeoutMs: number,
  signal: AbortSignal | undefined,
  probe: () => Promise<T | undefined>,
  dead?: () => string | undefined,
): Promise<T> {
  const timeoutMs = baseTimeoutMs * TIMEOUT_FACTOR;
  const end = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    if (signal?.aborted) throw signal.reason ?? new DplabError('cancelled');
    const gone = dead?.();
    if (gone) throw new DplabError(`${gone} while waiting for ${what}.`, { details: last });
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      if (err instanceof CommandError && (err.kind === 'aborted' || err.kind === 'tool-missing')) throw err;
      last = err instanceof CommandError ? `${err.stderr}${err.stdout}`.trim().slice(0, 800) : String(err);
    }
    if (Date.now() > end)
      throw new DplabError(`Timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}.`, { details: last || undefined });
    await sleep(500);
  }
}

export async function createNetwork(layout: SimLayout, binDir: string, signal?: AbortSignal): Promise<void> {
  writeRecord(layout, { binDir });
  await createNodeNetwork(layout, signal);
}

export async function startSimControlPlane(
  layout: SimLayout,
  binDir: string,
  kubeconfigOut: string,
  signal?: AbortSignal,
  note?: (m: string) => void,
): Promise<void> {
  const cp = layout.nodes[0];
  const plane = await startControlPlane({
    dir: cpDir(layout),
    ip: cp.ip,
    netns: cp.name,
    serviceCidr: layout.serviceSubnet,
    podCidr: layout.podSubnet,
    binDir,
    clusterName: layout.name,
    extraSans: [cp.name],
    signal,
    onProgress: note,
  });
  controlPlanes.set(layout.name, plane);
  mkdirSync(dirname(kubeconfigOut), { recursive: true });
  copyFileSync(plane.kubeconfig, kubeconfigOut);
  writeRecord(layout, { apiServerUrl: plane.apiServerUrl });
}

function plane(layout: SimLayout): ControlPlane {
  const p = controlPlanes.get(layout.name);
  if (!p) throw new DplabError(`The control plane of ${layout.name} was not started by this run.`);
  return p;
}

const kubeletName = (n: SimNode) => `kubelet-${n.name}`;

/** One kubelet stand-in per node, inside the node's namespace (its exec server listens on nodeIP:10250). */
export async function startKubelets(layout: SimLayout, binDir: string, signal?: AbortSignal): Promise<void> {
  const p = plane(layout);
  const admin = p.kubeconfig;
  for (const node of layout.nodes) {
    const nodeDir = join(layout.dir, 'nodes', node.name);
    mkdirSync(nodeDir, { recursive: true });
    const serving = await p.kubeletServingCert(node.name, node.ip);
    const config = {
      nodeName: node.name,
      nodeIP: node.ip,
      netns: node.name,
      kubeconfig: await p.nodeKubeconfig(node.name),
      binDir,
      stateDir: nodeDir,
      // NodeRestriction forbids a kubelet to set node-role.kubernetes.io/* itself; kubeadm labels
      // the control plane afterwards with admin credentials, and so do we (below).
      labels: {},
      taints: node.role === 'control-plane' ? [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' as const }] : [],
      clusterDNS: [layout.dnsIp],
      clusterDomain: layout.clusterDomain,
      // The exec server accepts only the API server's kubelet-client certificate, and serves one of the cluster CA.
      clientCAFile: p.caFile,
      servingCertFile: serving.cert,
      servingKeyFile: serving.key,
    };
    const file = join(nodeDir, 'kubelet.json');
    writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
    // In the node's network namespace but, unlike `ip netns exec`, in the host's mount namespace:
    // the pod namespaces it adds under /run/netns stay visible to everyone (nsenter execs: same pid).
    startDaemon(layout.dir, {
      name: kubeletName(node),
      file: 'nsenter',
      args: [
        `--net=/run/netns/${node.name}`,
        '--',
        process.execPath,
        '--import',
        'tsx',
        join(projectRoot, 'scripts/sim/kubelet/main.ts'),
        '--config',
        file,
      ],
      cwd: projectRoot,
    });
  }
  for (const node of layout.nodes) {
    await until(
      `the kubelet stand-in of ${node.name} to register its Node`,
      120_000,
      signal,
      async () => {
        await kubectl(binDir, admin, ['get', 'node', node.name, '-o', 'name'], { signal });
        return true;
      },
      () =>
        daemonAlive(layout.dir, kubeletName(node))
          ? undefined
          : `the kubelet stand-in of ${node.name} exited (log: ${logTail(layout.dir, kubeletName(node), 1500)})`,
    );
  }
  const cp = layout.nodes.find((n) => n.role === 'control-plane')!;
  await kubectl(
    binDir,
    admin,
    [
      'label',
      'node',
      cp.name,
      '--overwrite',
      'node-role.kubernetes.io/control-plane=',
      'node.kubernetes.io/exclude-from-external-load-balancers=',
    ],
    { signal },
  );
}

/** Wait for the controller manager's pod CIDRs, then route them between the nodes. */
export async function routePodCidrs(layout: SimLayout, binDir: string, signal?: AbortSignal): Promise<Record<string, string>> {
  const admin = plane(layout).kubeconfig;
  const cidrs = await until('pod CIDRs on every Node (kube-controller-manager --allocate-node-cidrs)', 120_000, signal, async () => {
    const r = await kubectl(
      binDir,
      admin,
      ['get', 'nodes', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.spec.podCIDR}{"\\n"}{end}'],
      { signal },
    );
    const map = Object.fromEntries(
      r.stdout
        .split('\n')
        .filter((l) => l.includes('='))
        .map((l) => l.split('=') as [string, string]),
    );
    return layout.nodes.every((n) => map[n.name]) ? map : undefined;
  });
  await addPodRoutes(layout, cidrs, signal);
  return cidrs;
}

/**
 * kube-proxy as kubeadm installs it: the addon's ConfigMap, RBAC and DaemonSet, whose pods the
 * kubelet stand-ins run in each node's network namespace; then each node's health endpoint.
 */
export async function startKubeProxies(layout: SimLayout, binDir: string, signal?: AbortSignal): Promise<void> {
  const p = plane(layout);
  const client = await p.kubeProxyClient();
  const version = componentVersions()['kube-proxy'];
  const addon = kubeProxyAddon(layout, { server: p.apiServerUrl, caFile: p.caFile, certFile: client.cert, keyFile: client.key }, version);
  await kubectl(binDir, p.kubeconfig, ['apply', '-f', '-'], { input: addon, signal });
  const pods = () =>
    kubectl(binDir, p.kubeconfig, ['-n', 'kube-system', 'get', 'pods', '-l', 'k8s-app=kube-proxy', '-o', 'wide'], { signal }).then(
      (r) => r.stdout.trim(),
      () => '',
    );
  for (const node of layout.nodes) {
    try {
      await until(`kube-proxy on ${node.name} to report healthy (:10256/healthz)`, 120_000, signal, async () => {
        await inNode(node.name, ['curl', '-sf', '--max-time', '3', 'http://127.0.0.1:10256/healthz'], { signal, timeoutMs: 10_000 });
        return true;
      });
    } catch (err) {
      if (err instanceof DplabError) throw new DplabError(err.message, { details: `${err.details ?? ''}\n${await pods()}`.trim() });
      throw err;
    }
  }
}

/** kubeadm's Corefile, minus `loop` (no upstream resolver is reachable from the node network). */
function corefile(layout: SimLayout, kubeconfig: string): string {
  return `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes ${layout.clusterDomain} in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
       kubeconfig ${kubeconfig}
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30
    reload
    loadbalance
}
`;
}

/** kubeadm's system:coredns role, the kube-dns Service and an EndpointSlice naming CoreDNS' address. */
export function dnsManifests(layout: SimLayout): string {
  const cp = layout.nodes[0];
  const ports = [
    { name: 'dns', port: 53, protocol: 'UDP' },
    { name: 'dns-tcp', port: 53, protocol: 'TCP' },
    { name: 'metrics', port: 9153, protocol: 'TCP' },
  ];
  const items = [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'system:coredns' },
      rules: [
        { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
        { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:coredns' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
      subjects: [{ kind: 'User', name: 'system:coredns' }],
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'kube-dns',
        namespace: 'kube-system',
        labels: { 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' },
      },
      spec: { clusterIP: layout.dnsIp, ports: ports.map((p) => ({ ...p, targetPort: p.port })) },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'kube-dns-sim',
        namespace: 'kube-system',
        labels: { 'kubernetes.io/service-name': 'kube-dns', 'endpointslice.kubernetes.io/managed-by': 'dplab-sim' },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: [cp.ip], conditions: { ready: true, serving: true, terminating: false }, nodeName: cp.name }],
      ports,
    },
  ];
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
}

export async function startDns(layout: SimLayout, binDir: string, signal?: AbortSignal): Promise<void> {
  const p = plane(layout);
  const cp = layout.nodes[0];
  const dir = join(layout.dir, 'coredns');
  mkdirSync(dir, { recursive: true });
  const pki = join(cpDir(layout), 'pki');
  const pair = await ensureLeaf(
    pki,
    { cert: join(pki, 'ca.crt'), key: join(pki, 'ca.key') },
    { name: 'coredns', cn: 'system:coredns' },
    signal,
  );
  const kc = writeKubeconfig(join(dir, 'coredns.kubeconfig'), {
    server: p.apiServerUrl,
    ca: p.caFile,
    client: pair,
    clusterName: layout.name,
    contextName: `kind-${layout.name}`,
    user: 'system:coredns',
  });
  writeFileSync(join(dir, 'Corefile'), corefile(layout, kc));
  await kubectl(binDir, p.kubeconfig, ['apply', '-f', '-'], { input: dnsManifests(layout), signal });
  startDaemon(layout.dir, { name: 'coredns', netns: cp.name, file: join(binDir, 'coredns'), args: ['-conf', join(dir, 'Corefile')] });
  await until(
    'CoreDNS to be ready (:8181/ready)',
    120_000,
    signal,
    async () => {
      await inNode(cp.name, ['curl', '-sf', '--max-time', '3', 'http://127.0.0.1:8181/ready'], { signal, timeoutMs: 10_000 });
      return true;
    },
    () => (daemonAlive(layout.dir, 'coredns') ? undefined : `CoreDNS exited (log: ${logTail(layout.dir, 'coredns', 1500)})`),
  );
}

/** Mounts under the state folder (the stand-in bind-mounts pods' UTS namespaces there). */
async function unmountUnder(dir: string): Promise<void> {
  let mounts: string[];
  try {
    mounts = readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[1])
      .filter((m) => m && (m === dir || m.startsWith(`${dir}/`)));
  } catch {
    return;
  }
  for (const m of mounts.sort((a, b) => b.length - a.length)) await run('umount', ['-l', m], { timeoutMs: 10_000 }).catch(() => undefined);
}

/** Stop every process, remove every namespace, link and file the cluster made. Idempotent. */
export async function deleteSimCluster(layout: SimLayout): Promise<string[]> {
  controlPlanes.delete(layout.name);
  const removed: string[] = [];
  await stopAll(layout.dir, ['coredns']);
  await stopAll(cpDir(layout), CONTROL_PLANE_DAEMONS);
  removed.push(...(await deleteNodeNetwork(layout)));
  await unmountUnder(layout.dir);
  if (existsSync(layout.dir)) {
    rmSync(layout.dir, { recursive: true, force: true });
    removed.push(`folder ${layout.dir}`);
  }
  return removed;
}
