// The Cilium trace parser on the real capture (fixtures/cilium-monitor/clusterip-from-pod.txt, its
// README row says how it was taken), read against the agent's service table taken with it: every
// connection, where its backend was chosen, the socket event, the lines of other flows, a
// half-printed last line, garbage, a drop; and the method's leftovers and removal on real processes.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../../base/exec.ts';
import { parse } from '../index.ts';
import { traceResultSchema, type PacketTrace } from '../../wire/trace.ts';
import { ciliumTrace } from './cilium-method.ts';
import { parseCiliumMonitor } from './cilium-monitor.ts';
import { traceFlow, type FlowTarget } from './flow.ts';
import { monitorCommand } from './method.ts';
import { traceResult } from './result.ts';
import { traceText } from './text.ts';

const FIX = join(import.meta.dirname, '..', 'fixtures', 'cilium-monitor');
const capture = readFileSync(join(FIX, 'clusterip-from-pod.txt'), 'utf8');
// The service table as taken (`cilium-dbg service list`, the rows of the two Services it needs: the
// `--` between them is grep's, not the agent's).
const model = parse(
  'cilium',
  readFileSync(join(FIX, 'clusterip-from-pod.services.txt'), 'utf8')
    .split('\n')
    .filter((l) => l !== '--')
    .join('\n'),
);

const CLIENT = '10.247.1.57';
const LOCAL = { ip: '10.247.1.182', port: 8080 };
const REMOTE = { ip: '10.247.2.183', port: 8080 };
const target = (client: string | null = CLIENT): FlowTarget => ({
  flow: traceFlow({ ip: '10.99.149.63', port: 80, client }),
  backends: [LOCAL, REMOTE],
});

/** A connection sent to the other node's backend: one event, as it left through the overlay. */
const overlay = (port: number, hash: string): PacketTrace => ({
  id: hash,
  protocol: 'tcp',
  from: { ip: CLIENT, port },
  to: { ip: '10.99.149.63', port: 80 },
  rewrittenTo: REMOTE,
  rewriteAt: 'connect',
  steps: [
    {
      table: 'cilium',
      chain: 'to-overlay',
      kind: 'event',
      rule: `10.247.1.57:${port} -> 10.247.2.183:8080 tcp SYN (state new, ifindex cilium_vxlan, identity 59248->23091, flow ${hash})`,
      handle: null,
      verdict: 'forward',
      target: null,
    },
  ],
  verdict: 'accept',
});

const SYN_1 =
  '-> endpoint 1079 flow 0x36f1d902 , identity 59248->23091 state new ifindex lxce502bece2a00 orig-ip 10.247.1.57: 10.247.1.57:60532 -> 10.247.1.182:8080 tcp SYN';

describe('cilium-dbg monitor (real capture, Cilium 1.19.4, socket LB on)', () => {
  it('reads each connection: its first packet already to a backend, so the backend was chosen at connect()', () => {
    const conns = parseCiliumMonitor(capture, target());
    expect(conns).toEqual<PacketTrace[]>([
      {
        id: '0x36f1d902',
        protocol: 'tcp',
        from: { ip: CLIENT, port: 60532 },
        to: { ip: '10.99.149.63', port: 80 },
        rewrittenTo: LOCAL,
        rewriteAt: 'connect',
        steps: [
          {
            table: 'cilium',
            chain: 'sock pre-xlate-fwd',
            kind: 'event',
            rule: 'dst 10.99.149.63:80 tcp (cgroup 413313, socket 211308)',
            handle: null,
            verdict: 'translate',
            target: null,
          },
          {
            table: 'cilium',
            chain: 'to-endpoint',
            kind: 'event',
            rule: '10.247.1.57:60532 -> 10.247.1.182:8080 tcp SYN (state new, ifindex lxce502bece2a00, identity 59248->23091, flow 0x36f1d902)',
            handle: '1079',
            verdict: 'forward',
            target: null,
          },
        ],
        verdict: 'accept',
      },
      overlay(54822, '0xf3f995a7'),
      overlay(54832, '0x9f340b81'),
    ]);
  });

  it('leaves out the other flows: the API server, the health checks, replies, and packets after the first', () => {
    // From anywhere (a trace from the node): the health check's new connection to 10.247.2.134:4240 is no backend of this Service.
    expect(parseCiliumMonitor(capture, target(null)).map((c) => c.from.port)).toEqual([60532, 54822, 54832]);
    // Another client: none of these.
    expect(parseCiliumMonitor(capture, target('10.247.1.99'))).toEqual([]);
    // Another Service (its backends unknown to the capture): none.
    expect(parseCiliumMonitor(capture, { flow: traceFlow({ ip: '10.99.0.10', port: 53 }), backends: [] })).toEqual([]);
  });

  it('leaves a half-printed last line for later (cut before its flags, it would read as a whole line)', () => {
    const upTo = capture.slice(0, capture.indexOf(SYN_1));
    expect(parseCiliumMonitor(`${upTo}${SYN_1.slice(0, -' SYN'.length)}`, target())).toEqual([]);
    const whole = parseCiliumMonitor(`${upTo}${SYN_1}\n`, target());
    expect(whole.map((c) => [c.from.port, c.rewrittenTo, c.steps.at(-1)?.rule])).toEqual([
      [
        60532,
        LOCAL,
        '10.247.1.57:60532 -> 10.247.1.182:8080 tcp SYN (state new, ifindex lxce502bece2a00, identity 59248->23091, flow 0x36f1d902)',
      ],
    ]);
  });

  it('ignores garbage and lines of other event types', () => {
    const noisy = capture
      .split('\n')
      .flatMap((l, i) => [
        l,
        ...(i % 7 === 3 ? ['%%% not cilium %%%', 'Policy verdict log: flow 0x0 local EP ID 161', '-> endpoint flow'] : []),
      ])
      .join('\n');
    expect(parseCiliumMonitor(noisy, target())).toEqual(parseCiliumMonitor(capture, target()));
  });

  it('a drop line (Cilium’s `xx drop` format) ends the connection there: outcome drop, the reason as its step', () => {
    const drop =
      'xx drop (Policy denied) flow 0x8f2a1c3d to endpoint 1079, ifindex 24, file bpf_lxc.c:2004, , identity 59248->23091: 10.247.1.57:60540 -> 10.247.1.182:8080 tcp SYN\n';
    const [c] = parseCiliumMonitor(drop, target());
    expect(c).toMatchObject({ id: '0x8f2a1c3d', from: { port: 60540 }, rewrittenTo: LOCAL, rewriteAt: 'connect', verdict: 'drop' });
    expect(c.steps).toEqual([
      {
        table: 'cilium',
        chain: 'drop',
        kind: 'event',
        rule: 'Policy denied: 10.247.1.57:60540 -> 10.247.1.182:8080 tcp SYN (identity 59248->23091)',
        handle: null,
        verdict: 'drop',
        target: null,
      },
    ]);
    const r = traceResult({ node: 'n', method: ciliumTrace, flow: target().flow, model, packets: [c], sent: 1 });
    expect(r.requests[0]).toMatchObject({ outcome: 'drop', backend: null, path: ['drop'] });
    expect(traceText(r)).toContain('DROP: Policy denied: 10.247.1.57:60540 -> 10.247.1.182:8080');
  });

  it('per packet (socket LB off): first seen to the ClusterIP, then to a backend', () => {
    // Made by hand in the real capture's format (same client, Service and backend): what the monitor
    // shows when the pod's own BPF program translates the packet: the from-endpoint event (not
    // aggregated away) still addressed to the ClusterIP, then the packet leaving to the backend.
    const perPacket = [
      '-> network flow 0x640a012e , identity host->unknown state established ifindex eth0 orig-ip 172.18.0.3: 172.18.0.3:45340 -> 172.18.0.2:6443 tcp ACK',
      '<- endpoint 161 flow 0x1a2b3c4d , identity 59248->unknown state new ifindex lxc892eb766429e orig-ip 10.247.1.57: 10.247.1.57:60600 -> 10.99.149.63:80 tcp SYN',
      '-> overlay flow 0x1a2b3c4d , identity 59248->23091 state new ifindex cilium_vxlan orig-ip 0.0.0.0: 10.247.1.57:60600 -> 10.247.2.183:8080 tcp SYN',
      '-> endpoint 161 flow 0x47786131 , identity 23091->59248 state reply ifindex lxc892eb766429e orig-ip 10.247.2.183: 10.247.2.183:8080 -> 10.247.1.57:60600 tcp SYN, ACK',
      '',
    ].join('\n');
    const [c] = parseCiliumMonitor(perPacket, target());
    expect(c).toMatchObject({
      id: '0x1a2b3c4d',
      from: { ip: CLIENT, port: 60600 },
      to: { ip: '10.99.149.63', port: 80 },
      rewrittenTo: REMOTE,
      rewriteAt: 'packet',
      verdict: 'accept',
    });
    expect(c.steps.map((s) => [s.chain, s.handle])).toEqual([
      ['from-endpoint', '161'],
      ['to-overlay', null],
    ]);
    const r = traceResult({ node: 'n', method: ciliumTrace, flow: target().flow, model, packets: [c], sent: 1 });
    expect(r.requests[0]).toMatchObject({ outcome: 'dnat', path: ['from-endpoint', 'to-overlay'], backend: { ...REMOTE, share: 0.5 } });
    expect(traceText(r)).toContain('→ from-endpoint → to-overlay → translated per packet to 10.247.2.183:8080');
    expect(traceText(r)).toContain('translated per packet: the packet left addressed to the ClusterIP');
  });

  it('read against the service table: each backend, the tally beside the shares, and where it was chosen', () => {
    const r = traceResult({
      mode: 'cilium',
      node: 'dplab-cilium-worker',
      method: ciliumTrace,
      flow: target().flow,
      model,
      packets: parseCiliumMonitor(capture, target()),
      sent: 3,
    });
    expect(traceResultSchema.parse(r)).toEqual(r);
    expect(r.method).toBe('cilium-monitor');
    expect(r.requests.map((q) => [q.outcome, q.backend, q.frontend?.type])).toEqual([
      // The model names a Cilium backend by itself (`via`: there is no chain to name).
      ['dnat', { ...LOCAL, via: 'backend 10.247.1.182:8080', share: 0.5 }, 'ClusterIP'],
      ['dnat', { ...REMOTE, via: 'backend 10.247.2.183:8080', share: 0.5 }, 'ClusterIP'],
      ['dnat', { ...REMOTE, via: 'backend 10.247.2.183:8080', share: 0.5 }, 'ClusterIP'],
    ]);
    expect(r.tally).toEqual([
      { ...LOCAL, share: 0.5, count: 1, via: 'backend 10.247.1.182:8080' },
      { ...REMOTE, share: 0.5, count: 2, via: 'backend 10.247.2.183:8080' },
    ]);
    expect(r.notes).toEqual([]);
    const text = traceText(r);
    expect(text.split('\n').slice(0, 5)).toEqual([
      'dplab-cilium-worker, cilium-monitor: tcp 10.99.149.63:80 from 10.247.1.57',
      '  1. 10.247.1.57:60532 → sock pre-xlate-fwd → to-endpoint → chosen at connect(): 10.247.1.182:8080',
      '  2. 10.247.1.57:54822 → to-overlay → chosen at connect(): 10.247.2.183:8080',
      '  3. 10.247.1.57:54832 → to-overlay → chosen at connect(): 10.247.2.183:8080',
      "  chosen at connect(): the packet never carried the ClusterIP; the socket load balancer put the backend's address in the socket before the first packet.",
    ]);
    expect(text).toMatch(/10\.247\.2\.183:8080 +2 +share 50%/);
  });

  it('nothing seen (a Service without backends refuses at connect()): no request, and a note saying why', () => {
    const r = traceResult({ node: 'n', method: ciliumTrace, flow: target().flow, model, packets: [], sent: 2 });
    expect(r.requests).toEqual([]);
    expect(r.notes).toEqual([
      '2 of 2 requests were not seen in the trace window (Cilium refuses a connection to a Service without backends at connect(), so no packet is sent; and the monitor reports only what its agent saw, the traced node’s).',
    ]);
  });
});

describe('the Cilium method', () => {
  it('turns nothing on, and runs the monitor under `timeout` with the mark in its environment', () => {
    expect(ciliumTrace.enable(target().flow, 'abcd1234')).toEqual([]);
    const argv = monitorCommand(ciliumTrace, 24).argv;
    expect(argv.slice(3)).toEqual([
      'dplab-trace',
      '24',
      'env',
      'DPLAB_TRACE=dplab-trace',
      'cilium-dbg',
      'monitor',
      '-t',
      'trace',
      '-t',
      'trace-sock',
      '-t',
      'drop',
      '-v',
    ]);
    expect(ciliumTrace.listening?.test('Listening for events on 2 CPUs with 64x4096 of shared memory\n')).toBe(true);
  });

  it('lists the monitors a trace started (by the mark in their environment, not the listing itself) and removes them', async () => {
    // The real scripts, on this machine's /proc: a stand-in monitor started exactly as a trace starts one.
    const argv = monitorCommand({ ...ciliumTrace, monitor: ['env', 'DPLAB_TRACE=dplab-trace', 'sleep', '30'] }, 30).argv;
    const child = spawn(argv[0], argv.slice(1), { stdio: 'ignore' });
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
    try {
      const list = async () => ciliumTrace.leftovers((await run(ciliumTrace.list.argv[0], ciliumTrace.list.argv.slice(1))).stdout);
      let found: string[] = [];
      for (let i = 0; i < 50 && !found.length; i++) {
        found = await list();
        if (!found.length) await new Promise((r) => setTimeout(r, 50));
      }
      expect(found).toHaveLength(1);
      expect(found[0]).toMatch(/^\d+ sleep 30$/);
      const [cmd] = ciliumTrace.remove(found);
      await run(cmd.argv[0], cmd.argv.slice(1));
      expect(await list()).toEqual([]);
      // `timeout` ends with its child.
      expect(await exited).not.toBeNull();
      expect(ciliumTrace.remove([])).toEqual([]);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('cilium-dbg monitor (a fresh capture with the method’s own command, fixtures/cilium-monitor/clusterip-from-pod-6.txt)', () => {
  const fresh = readFileSync(join(FIX, 'clusterip-from-pod-6.txt'), 'utf8');
  const freshModel = parse('cilium', readFileSync(join(FIX, 'clusterip-from-pod-6.services.txt'), 'utf8'));
  const local = { ip: '10.247.1.144', port: 8080 };
  const remote = { ip: '10.247.2.135', port: 8080 };
  const flow = traceFlow({ ip: '10.99.48.148', port: 80, client: '10.247.1.152' });

  it('six connections, each chosen at connect(), the socket event with the first, read against the agent’s table', () => {
    const packets = parseCiliumMonitor(fresh, { flow, backends: [local, remote] });
    expect(
      packets.map((p) => [
        p.id,
        p.from.port,
        p.rewrittenTo,
        p.rewriteAt,
        p.steps.map((s) => `${s.chain}${s.handle ? ` ${s.handle}` : ''}`),
      ]),
    ).toEqual([
      ['0x528531ed', 36522, local, 'connect', ['sock pre-xlate-fwd', 'to-endpoint 370']],
      ['0x997c5938', 36532, local, 'connect', ['to-endpoint 370']],
      ['0x26d6bb19', 36534, local, 'connect', ['to-endpoint 370']],
      ['0x77a177cc', 46698, remote, 'connect', ['to-overlay']],
      ['0x24003f57', 36542, local, 'connect', ['to-endpoint 370']],
      ['0x42d61a13', 36546, local, 'connect', ['to-endpoint 370']],
    ]);
    expect(packets[0].steps[0].rule).toBe('dst 10.99.48.148:80 tcp (cgroup 542380, socket 276428)');
    const r = traceResult({ mode: 'cilium', node: 'dplab-cilium-worker', method: ciliumTrace, flow, model: freshModel, packets, sent: 6 });
    expect(r.tally.map((t) => [t.ip, t.count, t.share])).toEqual([
      ['10.247.1.144', 5, 0.5],
      ['10.247.2.135', 1, 0.5],
    ]);
    expect(r.requests.every((q) => q.outcome === 'dnat' && q.frontend?.type === 'ClusterIP')).toBe(true);
    expect(r.notes).toEqual([]);
  });

  it('without a client, every new connection to the backends counts (the packet never names the address it was sent to); with one, only its own', () => {
    // A limitation a trace from the node lives with: another client's connection to the same
    // backends in the window counts too (from the node, Cilium's source is cilium_host's address).
    const nodePort = traceFlow({ ip: '172.18.0.5', port: 30903 });
    expect(parseCiliumMonitor(fresh, { flow: nodePort, backends: [local, remote] })).toHaveLength(6);
    expect(parseCiliumMonitor(fresh, { flow: { ...nodePort, client: '10.247.1.110' }, backends: [local, remote] })).toEqual([]);
  });
});
