// The stand-in's pure parts: config validation, addresses, images, probes, container argv/env,
// pod status. Expected values follow the kubelet's documented behaviour (probe thresholds,
// $(VAR) expansion, service link variables, the agnhost image's /agnhost entrypoint).
import { describe, expect, it } from 'vitest';
import { parseKubeletConfig } from './config.ts';
import { containerArgv, containerEnv, expandRefs, serviceLinkEnv } from './container-spec.ts';
import { resolveImage } from './images.ts';
import { ApiError } from './api-client.ts';
import { containerMounts, prepareVolumes, removeVolumes } from './volumes.ts';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allocateAddress, gatewayOf } from './ipam.ts';
import { clusterFirstDns, renderResolvConf } from './pod-network.ts';
import { podPhase, podStatus, restartDelayMs, shouldRestart, type ContainerView, type PodView } from './pod-status.ts';
import { initialProbeState, recordProbe, resolvePort } from './probes.ts';

const goodConfig = {
  nodeName: 'dplab-iptables-worker',
  nodeIP: '172.18.0.3',
  netns: 'dplab-iptables-worker',
  kubeconfig: '/tmp/k',
  binDir: '/tmp/bin',
  stateDir: '/tmp/state',
  clusterDNS: ['10.96.0.10'],
};

describe('kubelet config', () => {
  it('takes the provider’s file and fills the defaults', () => {
    const c = parseKubeletConfig(goodConfig);
    expect(c.clusterDomain).toBe('cluster.local');
    expect(c.labels).toEqual({});
    expect(c.taints).toEqual([]);
  });
  it('names every bad field', () => {
    expect(() => parseKubeletConfig({ ...goodConfig, nodeIP: '300.1.1.1', nodeName: 'Bad_Name', extra: 1 })).toThrow(
      /nodeIP: an IPv4 address.*nodeName: a DNS subdomain|nodeName.*nodeIP/,
    );
    expect(() => parseKubeletConfig({ ...goodConfig, clusterDNS: [] })).toThrow(/clusterDNS/);
    expect(() => parseKubeletConfig({ ...goodConfig, extra: 1 })).toThrow(/Unrecognized key/);
    expect(() => parseKubeletConfig({ ...goodConfig, servingCertFile: '/c.pem' })).toThrow(/servingKeyFile/);
  });
});

describe('pod addresses', () => {
  it('skips network, gateway and broadcast, lowest free first', () => {
    expect(gatewayOf('10.244.1.0/24')).toBe('10.244.1.1');
    expect(allocateAddress('10.244.1.0/24', [])).toBe('10.244.1.2');
    expect(allocateAddress('10.244.1.0/24', ['10.244.1.2', '10.244.1.4'])).toBe('10.244.1.3');
  });
  it('says when the CIDR is full', () => {
    const all = Array.from({ length: 5 }, (_, i) => `10.0.0.${i + 2}`);
    expect(allocateAddress('10.0.0.0/29', all.slice(0, 4))).toBe('10.0.0.6');
    expect(() => allocateAddress('10.0.0.0/29', all)).toThrow(/no free pod address left in 10.0.0.0\/29/);
    expect(() => allocateAddress('10.0.0.0/30', [])).toThrow(/too small/);
  });
});

describe('images', () => {
  it('maps any agnhost tag to the built binary and keeps the requested tag', () => {
    expect(resolveImage('registry.k8s.io/e2e-test-images/agnhost:2.53')).toEqual({ ok: true, binary: 'agnhost', requestedTag: '2.53' });
    expect(resolveImage('registry.k8s.io/e2e-test-images/agnhost:2.39@sha256:' + 'a'.repeat(64))).toMatchObject({
      ok: true,
      requestedTag: '2.39',
    });
  });
  it("maps kubeadm's kube-proxy image to the built kube-proxy", () => {
    expect(resolveImage('registry.k8s.io/kube-proxy:v1.35.0')).toEqual({ ok: true, binary: 'kube-proxy', requestedTag: 'v1.35.0' });
    expect(resolveImage('registry.k8s.io/kube-proxy-evil:v1').ok).toBe(false);
    expect(resolveImage('registry.k8s.io/e2e-test-images/kube-proxy:v1').ok).toBe(false);
  });
  it('refuses anything else with a reason a learner understands', () => {
    const r = resolveImage('nginx:1.27');
    expect(r).toMatchObject({ ok: false, reason: 'ErrImageNeverPull' });
    expect(r.ok ? '' : r.message).toMatch(/runs only agnhost .* and kube-proxy .*cannot run "nginx:1.27"/);
    expect(resolveImage('registry.k8s.io/e2e-test-images/agnhost-evil:1').ok).toBe(false);
  });
});

describe('probes', () => {
  it('readiness starts not ready; liveness starts passed', () => {
    expect(initialProbeState('readiness').ok).toBe(false);
    expect(initialProbeState('liveness').ok).toBe(true);
  });
  it('flips only after failureThreshold failures in a row, back after successThreshold successes', () => {
    const probe = { failureThreshold: 3, successThreshold: 2 };
    let s = { ok: true, successes: 0, failures: 0 };
    s = recordProbe(s, false, probe);
    s = recordProbe(s, false, probe);
    expect(s.ok).toBe(true);
    s = recordProbe(s, true, probe); // a success resets the failure count
    s = recordProbe(s, false, probe);
    s = recordProbe(s, false, probe);
    expect(s.ok).toBe(true);
    s = recordProbe(s, false, probe);
    expect(s.ok).toBe(false);
    s = recordProbe(s, true, probe);
    expect(s.ok).toBe(false);
    s = recordProbe(s, true, probe);
    expect(s.ok).toBe(true);
  });
  it('resolves named ports', () => {
    expect(resolvePort('http', { http: 8080 })).toBe(8080);
    expect(resolvePort('9376', {})).toBe(9376);
    expect(resolvePort('nope', {})).toBeNull();
  });
});

describe('container argv and env', () => {
  const pod = {
    name: 'web-0',
    namespace: 'demo',
    uid: 'u1',
    nodeName: 'n1',
    podIP: '10.244.1.2',
    hostIP: '172.18.0.3',
    serviceAccountName: 'default',
  };
  it('uses the agnhost entrypoint and default args, mapped to the built binary', () => {
    expect(containerArgv({ name: 'c', image: 'agnhost' }, {}, '/bin')).toEqual(['/bin/agnhost', 'pause']);
    expect(containerArgv({ name: 'c', image: 'agnhost', args: ['netexec', '--http-port=$(PORT)'] }, { PORT: '8080' }, '/bin')).toEqual([
      '/bin/agnhost',
      'netexec',
      '--http-port=8080',
    ]);
    expect(containerArgv({ name: 'c', image: 'agnhost', command: ['/agnhost', 'serve-hostname'] }, {}, '/b')).toEqual([
      '/b/agnhost',
      'serve-hostname',
    ]);
    expect(containerArgv({ name: 'c', image: 'agnhost', command: ['sh', '-c', 'echo $$(X) $(X)'] }, { X: '1' }, '/b')).toEqual([
      'sh',
      '-c',
      'echo $(X) 1',
    ]);
  });
  it("runs kubeadm's kube-proxy command as the built kube-proxy", () => {
    const c = {
      name: 'kube-proxy',
      image: 'registry.k8s.io/kube-proxy:v1.35.0',
      command: ['/usr/local/bin/kube-proxy', '--config=/var/lib/kube-proxy/config.conf', '--hostname-override=$(NODE_NAME)'],
    };
    expect(containerArgv(c, { NODE_NAME: 'n1' }, '/b')).toEqual([
      '/b/kube-proxy',
      '--config=/var/lib/kube-proxy/config.conf',
      '--hostname-override=n1',
    ]);
  });
  it('expands $(VAR) like the kubelet, leaving unknown references as written', () => {
    expect(expandRefs('$(A)-$(B)-$$(A)', { A: 'a' })).toBe('a-$(B)-$(A)');
  });
  it('builds env from values, the downward API and service links', () => {
    const env = containerEnv(
      {
        name: 'c',
        image: 'agnhost',
        env: [
          { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'URL', value: 'http://$(POD_IP):80' },
        ],
      },
      pod,
      serviceLinkEnv([
        { metadata: { name: 'web-svc' }, spec: { clusterIP: '10.96.3.4', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
      ]),
    );
    expect(env).toMatchObject({
      HOSTNAME: 'web-0',
      POD_IP: '10.244.1.2',
      URL: 'http://10.244.1.2:80',
      WEB_SVC_SERVICE_HOST: '10.96.3.4',
      WEB_SVC_SERVICE_PORT: '80',
      WEB_SVC_SERVICE_PORT_HTTP: '80',
      WEB_SVC_PORT: 'tcp://10.96.3.4:80',
      WEB_SVC_PORT_80_TCP_ADDR: '10.96.3.4',
    });
    expect(serviceLinkEnv([{ metadata: { name: 'headless' }, spec: { clusterIP: 'None', ports: [{ port: 80 }] } }])).toEqual({});
  });
  it('writes ClusterFirst resolv.conf', () => {
    expect(renderResolvConf(clusterFirstDns('demo', ['10.96.0.10'], 'cluster.local'))).toBe(
      'search demo.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n',
    );
  });
});

describe('pod status', () => {
  const running = (ready: boolean, restartCount = 0): ContainerView => ({
    name: 'c',
    image: 'agnhost',
    imageID: 'x',
    containerID: 'y',
    state: { kind: 'running', startedAt: 't' },
    lastState: null,
    restartCount,
    ready,
    started: true,
  });
  const view = (containers: ContainerView[], extra: Partial<PodView> = {}): PodView => ({
    hostIP: '172.18.0.3',
    podIP: '10.244.1.2',
    startTime: 't0',
    sandboxReady: true,
    finished: false,
    containers,
    readySince: 't1',
    scheduledAt: 't0',
    ...extra,
  });
  it('is Running and Ready when every container is ready', () => {
    const s = podStatus(view([running(true)]));
    expect(s.phase).toBe('Running');
    expect(s.podIP).toBe('10.244.1.2');
    expect(s.podIPs).toEqual([{ ip: '10.244.1.2' }]);
    expect(s.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
  });
  it('is Running but not Ready while a readiness probe fails', () => {
    const s = podStatus(view([running(false)]));
    const ready = s.conditions.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({ status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [c]' });
  });
  it('is Pending with the refusal as the container’s waiting reason', () => {
    const c: ContainerView = { ...running(false), state: { kind: 'waiting', reason: 'ErrImageNeverPull', message: 'runs only agnhost' } };
    const s = podStatus(view([c], { sandboxReady: false, podIP: null }));
    expect(s.phase).toBe('Pending');
    expect(s.podIP).toBeUndefined();
    expect(s.containerStatuses[0].state).toEqual({ waiting: { reason: 'ErrImageNeverPull', message: 'runs only agnhost' } });
  });
  it('ends Succeeded or Failed by exit codes', () => {
    const done = (exitCode: number): ContainerView => ({
      ...running(false),
      state: { kind: 'terminated', exitCode, reason: 'x', startedAt: 'a', finishedAt: 'b' },
    });
    expect(podPhase(view([done(0)], { finished: true }))).toBe('Succeeded');
    expect(podPhase(view([done(0), done(1)], { finished: true }))).toBe('Failed');
  });
  it('restarts per policy with a growing, capped back-off', () => {
    expect([shouldRestart('Always', 0), shouldRestart('OnFailure', 0), shouldRestart('OnFailure', 2), shouldRestart('Never', 1)]).toEqual([
      true,
      false,
      true,
      false,
    ]);
    expect([1, 2, 3, 10].map(restartDelayMs)).toEqual([1000, 2000, 4000, 30000]);
  });
});

describe('volumes', () => {
  const forbidden = () => new ApiError('GET', '/x', 403, '{"message":"no relationship found between node and this object"}');
  it('writes a ConfigMap, retrying while the Node authorizer does not yet know the pod names it; mounts it read-only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dplab-vol-'));
    let calls = 0;
    const api = {
      get: <T>() =>
        ++calls < 3 ? Promise.reject(forbidden()) : Promise.resolve({ data: { 'config.conf': 'mode: ipvs', '../escape': 'x' } } as T),
    };
    const volumes = [
      { name: 'kube-proxy', configMap: { name: 'kube-proxy' } },
      { name: 'lib-modules', hostPath: { path: '/lib/modules' } },
    ];
    const sources = await prepareVolumes(api, 'kube-system', 'u1', volumes, dir);
    expect(calls).toBe(3);
    const cmDir = sources.get('kube-proxy')!;
    expect(readFileSync(join(cmDir, 'config.conf'), 'utf8')).toBe('mode: ipvs');
    expect(existsSync(join(dir, 'volumes', 'u1', 'escape'))).toBe(false);
    const c = {
      name: 'kube-proxy',
      image: 'registry.k8s.io/kube-proxy:v1.35.0',
      volumeMounts: [
        { name: 'kube-proxy', mountPath: '/var/lib/kube-proxy' },
        { name: 'lib-modules', mountPath: '/lib/modules', readOnly: true },
        { name: 'kube-api-access-x', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
      ],
    };
    expect(containerMounts(c, sources, new Set(['kube-proxy']))).toEqual([
      { source: cmDir, target: '/var/lib/kube-proxy', readOnly: true },
    ]);
    await removeVolumes(dir, 'u1');
    expect(existsSync(join(dir, 'volumes', 'u1'))).toBe(false);
  });
  it('says which ConfigMap is missing, as the kubelet does', async () => {
    const api = { get: () => Promise.reject(new ApiError('GET', '/x', 404, '{"message":"not found"}')) };
    await expect(prepareVolumes(api, 'ns', 'u2', [{ name: 'cfg', configMap: { name: 'nope' } }], tmpdir())).rejects.toThrow(
      /MountVolume.SetUp failed for volume "cfg" : configmap "nope" not found/,
    );
  });
});
