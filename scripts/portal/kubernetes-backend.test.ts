/**
 * The Kubernetes seat backend against a fake API server that records every call and keeps the
 * objects in memory (names unique per kind, uids, delete preconditions), and a fake seat runner
 * that records every request. The real API server plays this in test/sim/kubernetes-seats.test.ts.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { clusterStatus } from '../../test/fixtures/cluster-status.ts';
import { MODES, type Mode } from '../wire/modes.ts';
import { KubernetesSeatBackend } from './kubernetes-backend.ts';
import { kubernetesSeatConfigFromEnv } from './kubernetes-config.ts';
import { seatPod } from './seat-objects.ts';
import { KubeApiError, type SeatKind, type SeatKubeApi, type SeatObject } from './seat-kube-api.ts';
import type { KubernetesSeatConfig } from './seat-objects.ts';
import type { SeatRequest, SeatResponse, SeatTransport } from './seat-client.ts';
import type { SeatEndpoint } from './seat-backend.ts';

const NS = 'class-7';
const config: KubernetesSeatConfig = { namespace: NS, runnerImage: 'registry.example.com/dplab/runner:0.1.0' };
const token = () => randomBytes(24).toString('base64url');

type Call = { op: 'create' | 'read' | 'delete' | 'list'; kind: SeatKind; name: string; uid?: string };

/** An API server in memory: what the backend may rely on, and nothing more. */
class FakeApi implements SeatKubeApi {
  objects = new Map<string, SeatObject>();
  calls: Call[] = [];
  private key = (kind: SeatKind, name: string) => `${kind}/${name}`;
  writes = () => this.calls.filter((c) => c.op === 'create' || c.op === 'delete');

  put(kind: SeatKind, obj: SeatObject) {
    obj.metadata = { ...obj.metadata, uid: obj.metadata?.uid ?? randomUUID(), namespace: NS };
    this.objects.set(this.key(kind, obj.metadata.name!), structuredClone(obj));
  }
  get(kind: SeatKind, name: string) {
    return this.objects.get(this.key(kind, name));
  }
  async create<T extends SeatObject>(kind: SeatKind, namespace: string, body: T): Promise<T> {
    expect(namespace).toBe(NS);
    this.calls.push({ op: 'create', kind, name: body.metadata!.name! });
    if (this.get(kind, body.metadata!.name!)) throw new KubeApiError(409, `${kind} exists`);
    const stored = structuredClone(body);
    if (kind === 'Secret') {
      // The API server stores stringData as base64 data, as a real one does.
      const s = stored as V1Secret;
      s.data = Object.fromEntries(Object.entries(s.stringData ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
      delete s.stringData;
    }
    if (kind === 'Pod') (stored as V1Pod).status = { phase: 'Pending' };
    this.put(kind, stored);
    return structuredClone(this.get(kind, body.metadata!.name!)) as T;
  }
  async read(kind: SeatKind, namespace: string, name: string) {
    expect(namespace).toBe(NS);
    this.calls.push({ op: 'read', kind, name });
    const o = this.get(kind, name);
    return o ? structuredClone(o) : null;
  }
  async delete(kind: SeatKind, namespace: string, name: string, uid: string) {
    expect(namespace).toBe(NS);
    this.calls.push({ op: 'delete', kind, name, uid });
    const o = this.get(kind, name);
    if (!o) return false;
    if (o.metadata!.uid !== uid) throw new KubeApiError(409, 'uid precondition failed');
    this.objects.delete(this.key(kind, name));
    return true;
  }
  async listPods(namespace: string, selector: string) {
    expect(namespace).toBe(NS);
    this.calls.push({ op: 'list', kind: 'Pod', name: selector });
    const terms = selector.split(',').map((t) => t.split('='));
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith('Pod/'))
      .map(([, o]) => o as V1Pod)
      .filter((p) => terms.every(([k, v]) => (v === undefined ? k in (p.metadata?.labels ?? {}) : p.metadata?.labels?.[k] === v)))
      .map((p) => structuredClone(p));
  }
  /** What the kubelet would write: scheduled, running, every container ready. */
  markReady(name: string) {
    const pod = this.get('Pod', name) as V1Pod;
    pod.spec!.nodeName = 'worker-1';
    pod.status = {
      phase: 'Running',
      conditions: [
        { type: 'PodScheduled', status: 'True' },
        { type: 'Ready', status: 'True' },
      ],
    };
  }
}

/** The runner's answers, in its wire shapes (hand-written, validated by SeatClient as a real one's are). */
function runnerAnswer(r: SeatRequest): SeatResponse {
  const json = (status: number, body: unknown) => ({ status, body: JSON.stringify(body) });
  if (r.path === '/api/health') return json(200, { ok: true, name: 'dataplane-lab', uptimeSeconds: 3 });
  const mode = r.path.split('/')[3] as Mode;
  if (r.method === 'POST') return json(202, { mode, state: 'provisioning', events: '/api/clusters/events' });
  if (r.method === 'DELETE') return json(200, clusterStatus(mode));
  return json(404, { error: { message: `no route ${r.path}` } });
}

/** A seat runner that records every request as it would go on the wire, and answers from a table. */
function fakeRunner(answer: (r: SeatRequest) => SeatResponse | Error = runnerAnswer) {
  const seen: (SeatRequest & { endpoint: SeatEndpoint })[] = [];
  const transport: SeatTransport = async (endpoint, r) => {
    seen.push({ ...r, endpoint });
    const a = answer(r);
    if (a instanceof Error) throw a;
    return a;
  };
  return { seen, transport };
}

function setup(answer?: Parameters<typeof fakeRunner>[0]) {
  const api = new FakeApi();
  const runner = fakeRunner(answer);
  const log: string[] = [];
  const backend = new KubernetesSeatBackend({ config, api, transport: runner.transport, log: (l) => log.push(l) });
  return { api, runner, backend, log };
}

describe('KubernetesSeatBackend with a recording API', () => {
  it('creates the Pod, then its Secret and Service owned by the Pod, and reports pending', async () => {
    const { api, backend } = setup();
    const t = token();
    const s = await backend.create({ id: 'a1', runnerToken: t, warm: ['iptables'] });
    expect(s).toMatchObject({ id: 'a1', phase: 'pending' });
    expect(s.message).toMatch(/scheduler|node/);
    expect(api.writes().map((c) => `${c.op} ${c.kind} ${c.name}`)).toEqual([
      'create Pod dplab-seat-a1',
      'create Secret dplab-seat-a1',
      'create Service dplab-seat-a1',
    ]);
    const podUid = api.get('Pod', 'dplab-seat-a1')!.metadata!.uid;
    for (const kind of ['Secret', 'Service'] as const) {
      expect(api.get(kind, 'dplab-seat-a1')!.metadata!.ownerReferences).toEqual([
        { apiVersion: 'v1', kind: 'Pod', name: 'dplab-seat-a1', uid: podUid },
      ]);
    }
    const secret = api.get('Secret', 'dplab-seat-a1') as V1Secret;
    expect(Buffer.from(secret.data!.token, 'base64').toString()).toBe(t);
    // The token is in the Secret only: never in the pod's spec.
    expect(JSON.stringify(api.get('Pod', 'dplab-seat-a1'))).not.toContain(t);
    // Nothing of this cluster in the seat: no API token, and the node's resolvers, not the
    // cluster's DNS, whose address the seat's own kind clusters also give their kube-dns.
    const pod = api.get('Pod', 'dplab-seat-a1') as V1Pod;
    expect(pod.spec).toMatchObject({ automountServiceAccountToken: false, dnsPolicy: 'Default' });
  });

  it('is idempotent per id: a second create makes nothing new', async () => {
    const { api, backend } = setup();
    const spec = { id: 'a1', runnerToken: token(), warm: [] };
    await backend.create(spec);
    const before = api.writes().length;
    expect((await backend.create(spec)).phase).toBe('pending');
    expect(api.writes().length).toBe(before);
  });

  it('takes back after a restart only the seat whose Secret holds the token the portal kept, touching nothing', async () => {
    const { api, backend } = setup();
    const t = token();
    await backend.create({ id: 'a1', runnerToken: t, warm: [] });
    const before = api.writes().length;
    // A portal started again: its own backend, the seat pod left running.
    const again = new KubernetesSeatBackend({ config, api });
    expect(await again.resume({ id: 'a1', runnerToken: t, warm: [] })).toMatchObject({ id: 'a1', phase: 'pending' });
    await expect(again.resume({ id: 'a1', runnerToken: token(), warm: [] })).rejects.toThrow(/not the one the portal kept/);
    await expect(again.resume({ id: 'b2', runnerToken: t, warm: [] })).rejects.toThrow(/not the one the portal kept/);
    expect(api.writes().length).toBe(before);
  });

  it('refuses a name taken by an object the portal did not make, and touches nothing', async () => {
    const { api, backend } = setup();
    api.put('Pod', { metadata: { name: 'dplab-seat-a1', labels: { [`dplab.io/seat`]: 'a1' } }, spec: { containers: [] } });
    await expect(backend.create({ id: 'a1', runnerToken: token(), warm: [] })).rejects.toThrow(/not made by the portal/);
    expect(api.writes()).toEqual([]);
    await backend.delete('a1');
    expect(api.writes()).toEqual([]);
    expect(api.get('Pod', 'dplab-seat-a1')).toBeDefined();
    expect((await backend.status('a1')).phase).toBe('deleted');
  });

  it('rejects an id that is not a DNS label and a weak token before calling the API', async () => {
    const { api, backend } = setup();
    await expect(backend.create({ id: 'A_1', runnerToken: token(), warm: [] })).rejects.toThrow(/DNS label/);
    await expect(backend.create({ id: 'a1', runnerToken: 'short', warm: [] })).rejects.toThrow(/too short/);
    expect(api.calls).toEqual([]);
    expect(await backend.status('../etc')).toEqual({ id: '../etc', phase: 'deleted' });
  });

  it('walks pending → ready: Ready pod, then the runner answers /api/health on the Service name, then warm clusters are asked for', async () => {
    let healthy = false;
    const { api, backend, runner } = setup((r) => (r.path === '/api/health' && !healthy ? new Error('ECONNREFUSED') : runnerAnswer(r)));
    const t = token();
    await backend.create({ id: 'b2', runnerToken: t, warm: ['iptables', 'nftables'] });
    api.markReady('dplab-seat-b2');
    const notYet = await backend.status('b2');
    expect(notYet.phase).toBe('pending');
    expect(notYet.message).toMatch(/does not answer \/api\/health/);
    healthy = true;
    const ready = await backend.status('b2');
    const host = `dplab-seat-b2.${NS}.svc:4321`;
    expect(ready).toMatchObject({ id: 'b2', phase: 'ready', endpoint: { url: `http://${host}`, host } });
    const warm = runner.seen.filter((r) => r.method === 'POST');
    expect(warm.map((r) => r.path)).toEqual(['/api/clusters/iptables/up', '/api/clusters/nftables/up']);
    // The security contract, as the requests go on the wire: the seat's own Host, its Origin on
    // writes, the seat's token; the open health route gets no token and no Origin.
    for (const r of warm) {
      expect(r.endpoint.host).toBe(host);
      expect(r.headers).toMatchObject({ host, origin: `http://${host}`, authorization: `Bearer ${t}` });
    }
    const health = runner.seen.filter((r) => r.path === '/api/health');
    expect(health.length).toBeGreaterThan(1);
    for (const r of health) expect(r.headers).toEqual({ host, accept: 'application/json' });
    // Asked once per seat, not on every poll.
    await backend.status('b2');
    expect(runner.seen.filter((r) => r.method === 'POST')).toHaveLength(2);
  });

  it('says ready with the runner’s own words when it refuses to warm a cluster, and asks again on the next poll', async () => {
    let refuse = true;
    const { api, backend, runner } = setup((r) =>
      r.method === 'POST' && refuse
        ? { status: 409, body: JSON.stringify({ error: { message: 'Docker is not running.' } }) }
        : runnerAnswer(r),
    );
    await backend.create({ id: 'w1', runnerToken: token(), warm: ['ipvs'] });
    api.markReady('dplab-seat-w1');
    expect(await backend.status('w1')).toMatchObject({
      phase: 'ready',
      message: "Warming the clusters failed: The seat's runner refused POST /api/clusters/ipvs/up: Docker is not running.",
    });
    refuse = false;
    expect(await backend.status('w1')).toMatchObject({ phase: 'ready', message: 'Clusters warming: ipvs.' });
    expect(runner.seen.filter((r) => r.method === 'POST')).toHaveLength(2);
  });

  it('says failed, with the reason in words, when the runner image cannot be pulled', async () => {
    const { api, backend } = setup();
    await backend.create({ id: 'c3', runnerToken: token(), warm: [] });
    const pod = api.get('Pod', 'dplab-seat-c3') as V1Pod;
    pod.spec!.nodeName = 'worker-1';
    pod.status = {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'True' }],
      containerStatuses: [
        {
          name: 'runner',
          image: config.runnerImage,
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { waiting: { reason: 'ImagePullBackOff', message: 'manifest unknown' } },
        },
      ],
    };
    const s = await backend.status('c3');
    expect(s.phase).toBe('failed');
    expect(s.message).toContain(`cannot pull the image ${config.runnerImage} (manifest unknown)`);
  });

  it('says pending with the scheduler’s words when no node has room', async () => {
    const { api, backend } = setup();
    await backend.create({ id: 'd4', runnerToken: token(), warm: [] });
    (api.get('Pod', 'dplab-seat-d4') as V1Pod).status = {
      phase: 'Pending',
      conditions: [
        { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient memory.' },
      ],
    };
    expect(await backend.status('d4')).toEqual({
      id: 'd4',
      phase: 'pending',
      message: 'Waiting for a node with room for the seat: 0/3 nodes are available: 3 Insufficient memory.',
    });
  });

  it('lists only the seats it made', async () => {
    const { api, backend } = setup();
    await backend.create({ id: 'e1', runnerToken: token(), warm: [] });
    await backend.create({ id: 'e2', runnerToken: token(), warm: [] });
    api.put('Pod', { metadata: { name: 'dplab-seat-x9', labels: { 'dplab.io/seat': 'x9' } }, spec: { containers: [] } });
    api.put('Pod', {
      metadata: { name: 'other', labels: { 'app.kubernetes.io/managed-by': 'dplab-portal', 'dplab.io/seat': 'e3' } },
      spec: { containers: [] },
    });
    expect((await backend.list()).map((s) => s.id).sort()).toEqual(['e1', 'e2']);
  });

  it('deletes the clusters through the runner first, then Pod, Service and Secret by uid; twice is harmless', async () => {
    const { api, backend, runner, log } = setup();
    const t = token();
    await backend.create({ id: 'f5', runnerToken: t, warm: [] });
    api.markReady('dplab-seat-f5');
    const uids = (['Pod', 'Service', 'Secret'] as const).map((k) => api.get(k, 'dplab-seat-f5')!.metadata!.uid);
    api.calls = [];
    await backend.delete('f5');
    const deletes = runner.seen.filter((r) => r.method === 'DELETE');
    expect(deletes.map((r) => r.path)).toEqual(MODES.map((m) => `/api/clusters/${m}`));
    const host = `dplab-seat-f5.${NS}.svc:4321`;
    for (const r of deletes) expect(r.headers).toMatchObject({ host, origin: `http://${host}`, authorization: `Bearer ${t}` });
    expect(log.join('\n')).not.toMatch(/outlive/);
    expect(api.writes()).toEqual([
      { op: 'delete', kind: 'Pod', name: 'dplab-seat-f5', uid: uids[0] },
      { op: 'delete', kind: 'Service', name: 'dplab-seat-f5', uid: uids[1] },
      { op: 'delete', kind: 'Secret', name: 'dplab-seat-f5', uid: uids[2] },
    ]);
    expect(api.objects.size).toBe(0);
    api.calls = [];
    await backend.delete('f5');
    expect(api.writes()).toEqual([]);
    expect((await backend.status('f5')).phase).toBe('deleted');
  });

  it('still deletes the seat when its runner does not answer, and says so in the log', async () => {
    const { api, backend, log } = setup((r) => (r.method === 'DELETE' ? new Error('socket hang up') : runnerAnswer(r)));
    await backend.create({ id: 'g6', runnerToken: token(), warm: [] });
    api.markReady('dplab-seat-g6');
    await backend.delete('g6');
    expect(api.objects.size).toBe(0);
    expect(log.join('\n')).toMatch(/clusters may outlive it.*socket hang up/);
  });

  it('leaves an unlabelled Service of the same name alone when it deletes a seat', async () => {
    const { api, backend } = setup();
    await backend.create({ id: 'h7', runnerToken: token(), warm: [] });
    api.objects.delete('Service/dplab-seat-h7');
    api.put('Service', { metadata: { name: 'dplab-seat-h7' }, spec: {} });
    await backend.delete('h7');
    expect([...api.objects.keys()]).toEqual(['Service/dplab-seat-h7']);
  });
});

describe('settings from the portal’s environment', () => {
  it('reads namespace, image, clusters per seat and node selector, and refuses nonsense clearly', () => {
    const c = kubernetesSeatConfigFromEnv({
      DPLAB_SEAT_NAMESPACE: 'dplab-workshop',
      DPLAB_SEAT_IMAGE: 'r.example/dplab:1',
      DPLAB_SEAT_DIND_IMAGE: 'mirror.example/docker:28.5.1-dind',
      DPLAB_SEAT_CLUSTERS: '2',
      DPLAB_SEAT_NODE_SELECTOR: 'dplab.io/seats=true',
      DPLAB_SEAT_TOLERATE: 'dplab.io/seats',
    });
    expect(c).toMatchObject({
      namespace: 'dplab-workshop',
      runnerImage: 'r.example/dplab:1',
      dindImage: 'mirror.example/docker:28.5.1-dind',
      nodeSelector: { 'dplab.io/seats': 'true' },
      tolerations: [{ key: 'dplab.io/seats', operator: 'Exists', effect: 'NoSchedule' }],
    });
    expect(c.sizing!.dind.requests.memory).toBe('6144Mi');
    expect(kubernetesSeatConfigFromEnv({ DPLAB_SEAT_NAMESPACE: 'ns', DPLAB_SEAT_IMAGE: 'x' }).dindImage).toBeUndefined();
    expect(() => kubernetesSeatConfigFromEnv({ DPLAB_SEAT_NAMESPACE: 'ns', DPLAB_SEAT_IMAGE: 'x', DPLAB_SEAT_DIND_IMAGE: 'a b' })).toThrow(
      /DPLAB_SEAT_DIND_IMAGE="a b"/,
    );
    expect(() => kubernetesSeatConfigFromEnv({ DPLAB_SEAT_NAMESPACE: 'Bad_NS', DPLAB_SEAT_IMAGE: 'x' })).toThrow(
      /DPLAB_SEAT_NAMESPACE="Bad_NS"/,
    );
    expect(() => kubernetesSeatConfigFromEnv({ DPLAB_SEAT_NAMESPACE: 'ns', DPLAB_SEAT_IMAGE: '' })).toThrow(/DPLAB_SEAT_IMAGE/);
    expect(() => kubernetesSeatConfigFromEnv({ DPLAB_SEAT_NAMESPACE: 'ns', DPLAB_SEAT_IMAGE: 'x', DPLAB_SEAT_CLUSTERS: '9' })).toThrow(
      /1–4/,
    );
  });

  it('gives seat pods the RuntimeClass DPLAB_SEAT_RUNTIME_CLASS names (a VM runtime: a kernel per seat), none without it', () => {
    const spec = { id: 's01', runnerToken: 'r'.repeat(40), warm: [] };
    const kata = kubernetesSeatConfigFromEnv({ DPLAB_SEAT_NAMESPACE: 'ns', DPLAB_SEAT_IMAGE: 'x', DPLAB_SEAT_RUNTIME_CLASS: 'kata-qemu' });
    expect(seatPod(spec, kata).spec?.runtimeClassName).toBe('kata-qemu');
    const plain = kubernetesSeatConfigFromEnv({ DPLAB_SEAT_NAMESPACE: 'ns', DPLAB_SEAT_IMAGE: 'x' });
    expect(seatPod(spec, plain).spec).not.toHaveProperty('runtimeClassName');
    expect(() =>
      kubernetesSeatConfigFromEnv({ DPLAB_SEAT_NAMESPACE: 'ns', DPLAB_SEAT_IMAGE: 'x', DPLAB_SEAT_RUNTIME_CLASS: 'Kata QEMU' }),
    ).toThrow(/DPLAB_SEAT_RUNTIME_CLASS="Kata QEMU" is not a RuntimeClass name/);
  });
});
