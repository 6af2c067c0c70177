import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyEnv, useDoubles, type Doubles } from '../../../test/fixtures/doubles.ts';
import { DAEMON_DOWN_STDERR, scenario } from '../../../test/fixtures/cluster-scenarios.ts';
import { Emitter, type ClusterEvent } from '../../clusters/events.ts';
import type { ClusterStatus } from '../../clusters/manager.ts';
import { MODES, type Mode } from '../../catalogue/modes.ts';
import { runPreflight } from '../../preflight/index.ts';
import { serveRunner, type TestRunner } from '../../../test/fixtures/runner-http.ts';
import { clusterStatus } from '../../../test/fixtures/cluster-status.ts';
import { terminalNotice } from '../terminal-notice.ts';
import { fakeSystem } from '../../../test/fixtures/cluster-scenarios.ts';
import { clusterWarmSchema } from '../../wire/clusters.ts';

const status = clusterStatus;

function fakeManager() {
  const calls: string[] = [];
  const events = new Emitter<ClusterEvent>();
  const states = new Map<Mode, ClusterStatus>(MODES.map((m) => [m, status(m)]));
  const m = {
    events,
    calls,
    states,
    async statusAll() {
      calls.push('statusAll');
      return [...states.values()];
    },
    async status(mode: Mode) {
      calls.push(`status ${mode}`);
      return states.get(mode)!;
    },
    ensure(mode: Mode, opts: { retain?: boolean; ahead?: boolean }) {
      calls.push(`ensure ${mode} retain=${!!opts.retain}${opts.ahead ? ' ahead' : ''}`);
      return new Promise<ClusterStatus>(() => undefined);
    },
    async delete(mode: Mode) {
      calls.push(`delete ${mode}`);
      return status(mode);
    },
  };
  return m;
}

let runner: TestRunner;
let manager: ReturnType<typeof fakeManager>;

beforeEach(async () => {
  manager = fakeManager();
  runner = await serveRunner({ clusters: manager, preflight: runPreflight }, { sseHeartbeatMs: 50 });
});
afterEach(() => runner.close());

const call = (method: string, path: string, body?: unknown) => runner.call(method, path, body);

describe('cluster routes', () => {
  it('GET /api/clusters lists every mode', async () => {
    const r = await call('GET', '/api/clusters');
    expect(r.status).toBe(200);
    expect(r.json.clusters.map((c: ClusterStatus) => c.mode)).toEqual([...MODES]);
  });

  it('GET /api/clusters/:mode, and 404 naming the modes for an unknown one', async () => {
    expect((await call('GET', '/api/clusters/ipvs')).json.mode).toBe('ipvs');
    const r = await call('GET', '/api/clusters/..%2Fetc');
    expect(r.status).toBe(404);
    expect(r.json.error.message).toMatch(/Unknown mode .* Known: iptables, ipvs, nftables, cilium\./);
  });

  it('POST up answers 202 at once and starts ensure; DELETE deletes', async () => {
    const r = await call('POST', '/api/clusters/cilium/up', { retain: true });
    expect(r.status).toBe(202);
    expect(r.json).toMatchObject({ mode: 'cilium', state: 'provisioning' });
    expect(manager.calls).toContain('ensure cilium retain=true');
    expect((await call('POST', '/api/clusters/nope/up')).status).toBe(404);
    expect((await call('DELETE', '/api/clusters/iptables')).status).toBe(200);
    expect(manager.calls).toContain('delete iptables');
  });

  it('GET /api/clusters/events streams a snapshot, events and heartbeats, and cleans up on close', async () => {
    const chunks: string[] = [];
    const { res, close } = await runner.stream('/api/clusters/events');
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    res.setEncoding('utf8');
    res.on('data', (c: string) => chunks.push(c));
    const until = async (pred: () => boolean) => {
      for (let i = 0; i < 100 && !pred(); i++) await new Promise((r) => setTimeout(r, 20));
      expect(pred()).toBe(true);
    };
    await until(() => chunks.join('').includes('event: snapshot'));
    expect(manager.events.size).toBe(1);
    manager.events.emit({ type: 'info', mode: 'ipvs', runId: 'r1', message: 'hello', at: 1 });
    await until(() =>
      chunks.join('').includes('event: info\ndata: {"type":"info","mode":"ipvs","runId":"r1","message":"hello","at":1}\n\n'),
    );
    await until(() => chunks.join('').includes(': heartbeat\n\n'));
    close();
    await until(() => manager.events.size === 0);
  });

  it('the terminal notice says what is missing, and nothing when ready', async () => {
    const m = manager;
    expect(await terminalNotice('iptables', m)).toBe(
      'The iptables cluster is not running. Press Start in the bar at the top, or run `dplab up iptables` here.',
    );
    manager.states.set('ipvs', status('ipvs', 'ready', { nodes: 3, readyNodes: 3 }));
    expect(await terminalNotice('ipvs', m)).toBeNull();
    manager.states.set('nftables', status('nftables', 'provisioning'));
    expect(await terminalNotice('nftables', m)).toMatch(/is starting/);
    manager.states.set(
      'cilium',
      status('cilium', 'absent', { error: { message: 'The Docker daemon is not reachable.', fix: 'Start Docker.' } }),
    );
    expect(await terminalNotice('cilium', m)).toBe(
      'The cilium cluster cannot be checked: The Docker daemon is not reachable. Start Docker.',
    ); // After Start failed for want of Docker: the same blocker, never "press Start" again.
    const progress = {
      runId: 'r1',
      startedAt: 1,
      endedAt: 2,
      actions: [{ id: 'preflight', title: 'Check the machine', state: 'failed' as const }],
      notes: [],
    };
    manager.states.set(
      'cilium',
      status('cilium', 'absent', { error: { message: 'Docker is not running.', fix: 'Start Docker.' }, progress }),
    );
    const afterStart = await terminalNotice('cilium', m);
    expect(afterStart).toBe('The cilium cluster could not start: Docker is not running. Start Docker.');
    expect(afterStart).not.toMatch(/Press Start/);
  });
});

describe('GET /api/doctor', () => {
  let d: Doubles;
  let restore: () => void;
  beforeEach(() => {
    d = useDoubles(scenario('iptables', [{ tool: 'docker', match: '^info ', stderr: DAEMON_DOWN_STDERR, exit: 1 }]));
    restore = applyEnv(d.env);
  });
  afterEach(() => {
    restore();
    d.cleanup();
  });

  it('returns the findings for a mode; 404 for an unknown mode', async () => {
    const r = await call('GET', '/api/doctor?mode=iptables');
    expect(r.status).toBe(200);
    expect(r.json.ok).toBe(false);
    expect(r.json.findings.find((f: { id: string }) => f.id === 'docker-daemon')).toMatchObject({ status: 'fail' });
    expect((await call('GET', '/api/doctor?mode=bogus')).status).toBe(404);
  });
});

describe('POST /api/clusters/:mode/warm', () => {
  const GiB = 1024 ** 3;
  let warmRunner: TestRunner | undefined;
  // Docker, kind and kubectl answer as on a healthy host (the decision asks the preflight last).
  let d: Doubles;
  let restore: () => void;
  beforeEach(() => {
    d = useDoubles(scenario('iptables'));
    restore = applyEnv(d.env);
  });
  afterEach(async () => {
    await warmRunner?.close();
    warmRunner = undefined;
    restore();
    d.cleanup();
  });
  /** A runner whose host has `free` bytes available, started with warming on or off. */
  async function serve(free: number, warm?: boolean, files?: Record<string, string>) {
    warmRunner = await serveRunner(
      { clusters: manager, preflight: runPreflight, system: fakeSystem({ memAvailableBytes: () => free, files }) },
      { sseHeartbeatMs: 50, warm },
    );
    return warmRunner;
  }
  const warmCall = async (r: TestRunner, mode: string, body?: unknown) => {
    const a = await r.call('POST', `/api/clusters/${mode}/warm`, body);
    return { ...a, parsed: a.status < 300 ? clusterWarmSchema.parse(a.json) : undefined };
  };

  it.each([
    {
      memory: 'room for one more',
      free: 8 * GiB,
      status: 202,
      answer: {
        outcome: 'warming',
        message: 'Starting the nftables cluster ahead: 8 GiB available; it needs about 2 GiB.',
        events: '/api/clusters/events',
      },
      started: true,
    },
    {
      memory: 'too little',
      free: 1.5 * GiB,
      status: 200,
      answer: { outcome: 'declined', reason: 'memory', message: '1.5 GiB available; the nftables cluster needs about 2 GiB.' },
      started: false,
    },
  ])('memory $memory: $status, an answer in the wire shape, and started: $started', async ({ free, status, answer, started }) => {
    const r = await serve(free);
    const a = await warmCall(r, 'nftables', {});
    expect(a.status).toBe(status);
    expect(a.parsed).toEqual({ mode: 'nftables', ...answer });
    expect(manager.calls.includes('ensure nftables retain=false ahead')).toBe(started);
    expect(manager.calls.filter((c) => c.startsWith('ensure'))).toHaveLength(started ? 1 : 0);
  });

  it('declines when the learner opted out, when the runner runs with --no-warm, and when the cluster exists', async () => {
    let r = await serve(8 * GiB);
    expect((await warmCall(r, 'nftables', { optedOut: true })).parsed).toMatchObject({ outcome: 'declined', reason: 'opted-out' });
    manager.states.set('nftables', status('nftables', 'ready'));
    expect((await warmCall(r, 'nftables')).parsed).toMatchObject({ outcome: 'declined', reason: 'exists' });
    manager.states.set('iptables', status('iptables', 'provisioning'));
    expect((await warmCall(r, 'cilium')).parsed).toMatchObject({ outcome: 'declined', reason: 'busy' });
    await r.close();
    r = await serve(8 * GiB, false);
    expect((await warmCall(r, 'ipvs')).parsed).toMatchObject({ outcome: 'declined', reason: 'off' });
    expect(manager.calls.some((c) => c.startsWith('ensure'))).toBe(false);
  });

  it('a cluster this host cannot start is not tried: IPVS on a kernel without ip_vs declines with the preflight’s reason', async () => {
    const r = await serve(8 * GiB, true, {
      '/proc/modules': 'nf_conntrack 196608 5 - Live 0x0\n',
      '/proc/sys/kernel/osrelease': '6.1.0-test\n',
      '/lib/modules/6.1.0-test/modules.dep': 'kernel/net/netfilter/nf_conntrack.ko:\n',
    });
    const a = await warmCall(r, 'ipvs');
    expect(a.status).toBe(200);
    expect(a.parsed).toEqual({
      outcome: 'declined',
      mode: 'ipvs',
      reason: 'host',
      message: expect.stringMatching(/^The IPVS cluster cannot start here\. This kernel \(6\.1\.0-test\) has no ip_vs, .*module to load/),
    });
    // The same host starts the nftables cluster ahead.
    expect((await warmCall(r, 'nftables')).status).toBe(202);
    expect(manager.calls.filter((c) => c.startsWith('ensure'))).toEqual(['ensure nftables retain=false ahead']);
  });

  it('a workshop seat declines even with memory to spare', async () => {
    const before = process.env.DPLAB_SEAT;
    process.env.DPLAB_SEAT = 's01';
    try {
      const r = await serve(64 * GiB);
      expect((await warmCall(r, 'nftables')).parsed).toMatchObject({ outcome: 'declined', reason: 'seat' });
    } finally {
      if (before === undefined) delete process.env.DPLAB_SEAT;
      else process.env.DPLAB_SEAT = before;
    }
    expect(manager.calls.some((c) => c.startsWith('ensure'))).toBe(false);
  });

  it('a bad mode id is a 404 naming the modes', async () => {
    const r = await serve(8 * GiB);
    const a = await r.call('POST', '/api/clusters/..%2Fnftables/warm', {});
    expect(a.status).toBe(404);
    expect(a.json.error.message).toMatch(/Unknown mode .* Known: iptables, ipvs, nftables, cilium\./);
  });

  it('attacks: a body that is not the request shape gets a 400 that says why; no token, 401; another Origin, 403; nothing starts', async () => {
    const r = await serve(8 * GiB);
    const extra = await r.call('POST', '/api/clusters/nftables/warm', { optedOut: false, command: 'rm -rf /' });
    expect(extra.status).toBe(400);
    expect(extra.json.error.message).toMatch(/^Bad warm request: /);
    const wrongType = await r.call('POST', '/api/clusters/nftables/warm', { optedOut: 'no' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.json.error.message).toContain('optedOut');
    expect((await r.call('POST', '/api/clusters/nftables/warm', ['x'])).status).toBe(400);
    const notJson = await fetch(`${r.base}/api/clusters/nftables/warm`, {
      method: 'POST',
      headers: { authorization: 'Bearer runner-http-test-token', origin: r.base, 'content-type': 'application/json' },
      body: '{"optedOut":',
    });
    expect(notJson.status).toBe(400);
    const anonymous = await fetch(`${r.base}/api/clusters/nftables/warm`, { method: 'POST', headers: { origin: r.base } });
    expect(anonymous.status).toBe(401);
    const foreign = await fetch(`${r.base}/api/clusters/nftables/warm`, {
      method: 'POST',
      headers: { authorization: 'Bearer runner-http-test-token', origin: 'http://evil.example' },
    });
    expect(foreign.status).toBe(403);
    expect(manager.calls.some((c) => c.startsWith('ensure'))).toBe(false);
  });
});
