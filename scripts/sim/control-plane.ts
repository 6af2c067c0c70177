/**
 * The real control plane of a sim cluster: etcd, kube-apiserver, kube-controller-manager (with
 * --allocate-node-cidrs, so nodes get pod CIDRs as on kind) and kube-scheduler, each a detached
 * process with a pidfile under `dir`. Inside a node's network namespace it binds the node's
 * address like kind's control-plane node; without one it binds 127.0.0.1 on free ports (tests).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CommandError, run } from '../base/exec.ts';
import { DplabError } from '../base/errors.ts';
import { ensureCa, ensureLeaf, ensureServiceAccountKeys, writeKubeconfig, type CertPair } from './certs.ts';
import { daemonAlive, logTail, startDaemon, stopAll } from './processes.ts';
import { freePort } from '../base/free-port.ts';

export interface ControlPlaneOptions {
  /** State folder: pki/, etcd data, logs, pidfiles. */
  dir: string;
  /** Address the API server binds and advertises (default 127.0.0.1). */
  ip?: string;
  /** Run every process in this network namespace (which must hold `ip`). */
  netns?: string;
  serviceCidr: string;
  podCidr: string;
  binDir: string;
  /** Names of the cluster in kubeconfigs (default `dplab-sim`). */
  clusterName?: string;
  /** Extra DNS names on the API server certificate (the control-plane node's name). */
  extraSans?: readonly string[];
  signal?: AbortSignal;
  /** How long to wait for /readyz and the controllers (default 120 s). */
  readyTimeoutMs?: number;
  onProgress?: (line: string) => void;
}

export interface ControlPlane {
  /** Admin kubeconfig (system:masters), like kind's. */
  kubeconfig: string;
  apiServerUrl: string;
  caFile: string;
  /** A kubeconfig for `system:node:<name>` (group system:nodes): what a kubelet uses. */
  nodeKubeconfig(nodeName: string): Promise<string>;
  /** A client certificate for `system:kube-proxy` (bound to system:node-proxier by the API server). */
  kubeProxyClient(): Promise<CertPair>;
  /** A serving certificate for a node's kubelet API (exec), signed by the cluster CA. */
  kubeletServingCert(nodeName: string, nodeIp: string): Promise<CertPair>;
  /** Stop every process this control plane started (its data stays in `dir`). */
  stop(): Promise<void>;
}

/** Start order; stop() goes backwards. */
export const CONTROL_PLANE_DAEMONS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;

/** First address of a CIDR plus one: the `kubernetes` Service's ClusterIP (10.96.0.1). */
/**
 * What kube-controller-manager and kube-scheduler share: one kubeconfig for the API, for
 * authenticating and for authorizing callers; no serving port (nothing here scrapes them) and
 * no leader election (one of each).
 */
function componentFlags(kubeconfig: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--secure-port=0',
    '--leader-elect=false',
  ];
}

function firstServiceIp(serviceCidr: string): string {
  const [ip] = serviceCidr.split('/');
  const p = ip.split('.').map(Number);
  return [p[0], p[1], p[2], p[3] + 1].join('.');
}

export async function startControlPlane(o: ControlPlaneOptions): Promise<ControlPlane> {
  const say = o.onProgress ?? (() => undefined);
  const ip = o.ip ?? '127.0.0.1';
  const name = o.clusterName ?? 'dplab-sim';
  const pki = join(o.dir, 'pki');
  mkdirSync(pki, { recursive: true });
  const inNetns = !!o.netns;
  const ports = inNetns ? { etcd: 2379, peer: 2380, api: 6443 } : { etcd: await freePort(), peer: await freePort(), api: await freePort() };
  const apiServerUrl = `https://${ip}:${ports.api}`;

  say('making certificates (openssl)');
  const ca = await ensureCa(pki, o.signal);
  const serving = await ensureLeaf(
    pki,
    ca,
    {
      name: 'apiserver',
      cn: 'kube-apiserver',
      dns: [
        'kubernetes',
        'kubernetes.default',
        'kubernetes.default.svc',
        'kubernetes.default.svc.cluster.local',
        'localhost',
        ...(o.extraSans ?? []),
      ],
      ips: [...new Set([ip, '127.0.0.1', firstServiceIp(o.serviceCidr)])],
    },
    o.signal,
  );
  const admin = await ensureLeaf(pki, ca, { name: 'admin', cn: 'kubernetes-admin', orgs: ['system:masters'] }, o.signal);
  const kubeletClient = await ensureLeaf(
    pki,
    ca,
    { name: 'apiserver-kubelet-client', cn: 'kube-apiserver-kubelet-client', orgs: ['system:masters'] },
    o.signal,
  );
  const cm = await ensureLeaf(pki, ca, { name: 'controller-manager', cn: 'system:kube-controller-manager' }, o.signal);
  const sched = await ensureLeaf(pki, ca, { name: 'scheduler', cn: 'system:kube-scheduler' }, o.signal);
  const sa = await ensureServiceAccountKeys(pki, o.signal);

  const kc = (file: string, client: CertPair, user: string) =>
    writeKubeconfig(join(o.dir, file), { server: apiServerUrl, ca: ca.cert, client, clusterName: name, contextName: `kind-${name}`, user });
  const kubeconfig = kc('admin.kubeconfig', admin, 'kubernetes-admin');
  const cmKubeconfig = kc('controller-manager.kubeconfig', cm, 'system:kube-controller-manager');
  const schedKubeconfig = kc('scheduler.kubeconfig', sched, 'system:kube-scheduler');
  const bin = (b: string) => join(o.binDir, b);
  const netns = o.netns;

  // A crash of an earlier run may have left processes: stop them before binding the same ports.
  await stopAll(o.dir, CONTROL_PLANE_DAEMONS);

  const stop = () => stopAll(o.dir, CONTROL_PLANE_DAEMONS);
  try {
    say('starting etcd');
    startDaemon(o.dir, {
      name: 'etcd',
      netns,
      file: bin('etcd'),
      args: [
        '--name=default',
        `--data-dir=${join(o.dir, 'etcd')}`,
        `--listen-client-urls=http://127.0.0.1:${ports.etcd}`,
        `--advertise-client-urls=http://127.0.0.1:${ports.etcd}`,
        `--listen-peer-urls=http://127.0.0.1:${ports.peer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${ports.peer}`,
        `--initial-cluster=default=http://127.0.0.1:${ports.peer}`,
        // A throw-away lab cluster on a shared disk: durability is not worth the fsyncs.
        '--unsafe-no-fsync',
        '--log-level=warn',
      ],
    });
    say('starting kube-apiserver');
    startDaemon(o.dir, {
      name: 'kube-apiserver',
      netns,
      file: bin('kube-apiserver'),
      args: [
        `--advertise-address=${ip}`,
        `--bind-address=${ip}`,
        `--secure-port=${ports.api}`,
        `--etcd-servers=http://127.0.0.1:${ports.etcd}`,
        `--client-ca-file=${ca.cert}`,
        `--tls-cert-file=${serving.cert}`,
        `--tls-private-key-file=${serving.key}`,
        `--kubelet-client-certificate=${kubeletClient.cert}`,
        `--kubelet-client-key=${kubeletClient.key}`,
        '--kubelet-preferred-address-types=InternalIP,Hostname',
        `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
        `--service-account-key-file=${sa.pub}`,
        `--service-account-signing-key-file=${sa.key}`,
        `--service-cluster-ip-range=${o.serviceCidr}`,
        '--authorization-mode=Node,RBAC',
        '--enable-admission-plugins=NodeRestriction',
        '--allow-privileged=true',
        '--profiling=false',
        `--cert-dir=${join(o.dir, 'apiserver-certs')}`,
      ],
    });
    await waitFor(
      o,
      `kube-apiserver at ${apiServerUrl}/readyz`,
      async () => {
        const body = await apiGetFrom(o.netns, apiServerUrl, '/readyz', ca.cert, admin);
        if (body.trim() !== 'ok') throw new Error(body);
      },
      ['etcd', 'kube-apiserver'],
    );
    say('starting kube-controller-manager and kube-scheduler');
    startDaemon(o.dir, {
      name: 'kube-controller-manager',
      netns,
      file: bin('kube-controller-manager'),
      args: [
        ...componentFlags(cmKubeconfig),
        '--allocate-node-cidrs=true',
        `--cluster-cidr=${o.podCidr}`,
        '--node-cidr-mask-size=24',
        `--service-cluster-ip-range=${o.serviceCidr}`,
        `--cluster-name=${name}`,
        '--use-service-account-credentials=true',
        `--service-account-private-key-file=${sa.key}`,
        `--root-ca-file=${ca.cert}`,
        `--cluster-signing-cert-file=${ca.cert}`,
        `--cluster-signing-key-file=${ca.key}`,
        '--controllers=*,bootstrapsigner,tokencleaner',
        '--profiling=false',
      ],
    });
    startDaemon(o.dir, {
      name: 'kube-scheduler',
      netns,
      file: bin('kube-scheduler'),
      args: [...componentFlags(schedKubeconfig), '--profiling=false'],
    });
    // The service-account controller making kube-system's `default` account shows the controllers work.
    await waitFor(
      o,
      'the controller manager (kube-system/default ServiceAccount)',
      async () => {
        await apiGetFrom(o.netns, apiServerUrl, '/api/v1/namespaces/kube-system/serviceaccounts/default', ca.cert, admin);
      },
      ['kube-controller-manager', 'kube-scheduler'],
    );
  } catch (err) {
    await stop();
    throw err;
  }

  const makeKubeconfig = async (file: string, spec: { name: string; cn: string; orgs?: string[] }) => {
    const pair = await ensureLeaf(pki, ca, spec, o.signal);
    return kc(file, pair, spec.cn);
  };
  return {
    kubeconfig,
    apiServerUrl,
    caFile: ca.cert,
    nodeKubeconfig: (nodeName) =>
      makeKubeconfig(`kubelet-${nodeName}.kubeconfig`, {
        name: `kubelet-${nodeName}`,
        cn: `system:node:${nodeName}`,
        orgs: ['system:nodes'],
      }),
    kubeProxyClient: () => ensureLeaf(pki, ca, { name: 'kube-proxy', cn: 'system:kube-proxy' }, o.signal),
    kubeletServingCert: (nodeName, nodeIp) =>
      ensureLeaf(pki, ca, { name: `kubelet-serving-${nodeName}`, cn: nodeName, dns: [nodeName], ips: [nodeIp] }, o.signal),
    stop,
  };
}

/** GET a path with the admin certificate; resolves with the body of a 200, rejects otherwise. */
function apiGet(base: string, path: string, caFile: string, client: CertPair, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, base),
      { ca: readFileSync(caFile), cert: readFileSync(client.cert), key: readFileSync(client.key), timeout: timeoutMs },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`HTTP ${res.statusCode}: ${body.slice(0, 300)}`))));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** apiGet from inside `netns` when given (its address may not be reachable from here), with curl. */
async function apiGetFrom(netns: string | undefined, base: string, path: string, caFile: string, client: CertPair): Promise<string> {
  if (!netns) return apiGet(base, path, caFile, client);
  const r = await run(
    'ip',
    [
      'netns',
      'exec',
      netns,
      'curl',
      '-sS',
      '--fail',
      '--max-time',
      '5',
      '--cacert',
      caFile,
      '--cert',
      client.cert,
      '--key',
      client.key,
      new URL(path, base).toString(),
    ],
    { timeoutMs: 15_000 },
  );
  return r.stdout;
}

/** Poll `probe` until it resolves; fail early (with the log) when one of `daemons` died. */
async function waitFor(o: ControlPlaneOptions, what: string, probe: () => Promise<void>, daemons: readonly string[]): Promise<void> {
  const until = Date.now() + (o.readyTimeoutMs ?? 120_000);
  let last: string;
  for (;;) {
    if (o.signal?.aborted) throw o.signal.reason ?? new DplabError('cancelled');
    const dead = daemons.find((d) => !daemonAlive(o.dir, d));
    if (dead) {
      throw new DplabError(`${dead} exited while waiting for ${what}.`, {
        fix: `See its log: ${join(o.dir, 'logs', `${dead}.log`)}`,
        details: logTail(o.dir, dead),
      });
    }
    try {
      await probe();
      return;
    } catch (err) {
      if (err instanceof CommandError && (err.kind === 'aborted' || err.kind === 'tool-missing')) throw err;
      last = err instanceof CommandError ? `${err.stderr}${err.stdout}`.trim().slice(0, 500) : String(err);
    }
    if (Date.now() > until) {
      throw new DplabError(`Timed out waiting for ${what}.`, {
        details: [last, ...daemons.map((d) => `--- ${d} ---\n${logTail(o.dir, d, 1500)}`)].join('\n'),
        fix: `See the logs under ${join(o.dir, 'logs')}.`,
      });
    }
    await sleep(500);
  }
}
