// `dplab trace` and POST /api/dataplane/:mode/trace through the real command seam, with the test
// doubles standing in for kind, kubectl and docker and the monitor replaying real captured kernel
// output (test/fixtures/trace-scenario.ts): the commands in order, the path and tally printed, and
// every refusal (unknown Service, pod or node; a trace already on; Ctrl-C) clear, with the trace
// rule or table gone afterwards.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installDoubles } from '../../../test/fixtures/doubles.ts';
import { ciliumTraceRules, traceRules, type CiliumTraceScenario, type TraceScenario } from '../../../test/fixtures/trace-scenario.ts';
import { serveRunner, type TestRunner } from '../../../test/fixtures/runner-http.ts';
import { projectRoot } from '../../base/paths.ts';
import { commandContext } from '../../commands/command.ts';
import { trace } from '../../commands/trace.ts';
import { DplabError } from '../../base/errors.ts';
import { traceResultSchema } from '../../wire/trace.ts';

type Mode = 'iptables' | 'nftables';

function setup(mode: Mode, opts: TraceScenario = {}) {
  const d = installDoubles({ rules: traceRules(mode, opts) });
  mkdirSync(join(d.env.DPLAB_STATE_DIR, 'kube'), { recursive: true });
  writeFileSync(join(d.env.DPLAB_STATE_DIR, 'kube', `dplab-${mode}.yaml`), 'apiVersion: v1\n');
  return d;
}

async function runCli(argv: string[], signal?: AbortSignal): Promise<{ out: string; err: unknown }> {
  let out = '';
  const ctx = commandContext({
    stdout: { write: (s: string) => void (out += s) },
    stderr: { write: () => {} },
    ...(signal ? { signal } : {}),
  });
  try {
    await trace.run(argv, ctx);
    return { out, err: null };
  } catch (err) {
    return { out, err };
  }
}

const MODES = [
  {
    mode: 'iptables',
    path: /KUBE-SERVICES → KUBE-SVC-LOLE4ISW44XBNF3G → KUBE-SEP-\w+ → DNAT to 10\.244\.\d\.\d:8080/,
    enable: 'iptables -w 5 -t raw -I',
    remove: 'iptables -w 5 -t raw -D OUTPUT',
    list: 'iptables -w 5 -t raw -S',
  },
  {
    mode: 'nftables',
    path: /services → service-PFISGYVC-default\/web\/tcp\/ → endpoint-\w+-default\/web\/tcp\/__10\.244\.\d\.\d\/8080 → DNAT to/,
    enable: 'nft -f -',
    remove: 'nft delete table ip dplab-trace',
    list: 'nft list tables',
  },
] as const;

describe.each(MODES)('dplab trace $mode (test doubles, captured monitor output)', { timeout: 60_000 }, (m) => {
  it('traces from the node: turns tracing on, starts the monitor, sends, removes, and prints each path and the tally', async () => {
    const d = setup(m.mode);
    const { out, err } = await runCli([m.mode, 'default/web', '--count', '6']);
    expect(err).toBeNull();
    const lines = out.split('\n');
    expect(lines[0]).toMatch(/^dplab-\w+-worker, (xtables|nft)-monitor: tcp 10\.96\.45\.112:80$/);
    expect(lines.filter((l) => m.path.test(l))).toHaveLength(6);
    expect(out).toMatch(/where 6 requests went, beside the share the rules give/);
    expect(out).toMatch(/10\.244\.1\.2:8080 +\d +share 33%/);
    const docker = d.commandLines().filter((l) => l.startsWith('docker exec'));
    const at = (part: string) => docker.findIndex((l) => l.includes(part));
    // Listed first (nothing on), enabled, the monitor under `timeout`, requests, removed, listed again.
    expect(at(m.list)).toBeLessThan(at(m.enable));
    expect(at(m.enable)).toBeLessThan(at('sh -c'));
    expect(docker[at('sh -c')]).toMatch(/exec timeout "\$t" "\$@" dplab-trace \d+ /);
    expect(docker.filter((l) => l.includes(' curl ')).length).toBe(6);
    expect(at(m.remove)).toBeGreaterThan(docker.findLastIndex((l) => l.includes(' curl ')));
    expect(docker.at(-1)).toContain(m.list);
    expect(d.state().traced).toBe('off');
  });

  it('--json is the wire shape', async () => {
    setup(m.mode);
    const { out, err } = await runCli([m.mode, 'default/web', '--count', '6', '--json']);
    expect(err).toBeNull();
    const r = traceResultSchema.parse(JSON.parse(out));
    expect(r.requests.every((q) => q.outcome === 'dnat' && q.service === 'default/web')).toBe(true);
  });

  it('a Service without endpoints: the rule that rejects', async () => {
    setup(m.mode, { scenario: 'no-endpoints' });
    const { out, err } = await runCli([m.mode, 'default/web-idle', '--count', '2']);
    expect(err).toBeNull();
    expect(out).toMatch(/REJECT: .*(-j REJECT|reject)/);
  });

  it.each([
    [['default/nope'], /Service default\/nope does not exist/, /kubectl -n default get services/],
    [['default/web', '--from', 'default/ghost'], /Pod default\/ghost does not exist/, /kubectl -n default get pods/],
    [['default/web', '--node', 'dplab-x-worker9'], /Unknown node "dplab-x-worker9"/, null],
    [['default/web', '--port', '81'], /has no port 81/, /Its ports: 80/],
    [['default/web', '--count', '99'], /--count must be 1 to 20/, null],
  ] as const)('%j: a clear error naming what to do, and nothing turned on', async (args, message, fix) => {
    const d = setup(m.mode);
    const { err } = await runCli([m.mode, ...args]);
    expect(err).toBeInstanceOf(DplabError);
    expect((err as DplabError).message).toMatch(message);
    if (fix) expect((err as DplabError).fix).toMatch(fix);
    expect(d.commandLines().some((l) => l.includes(m.enable))).toBe(false);
  });

  it('a trace already on the node (another runner, or a crashed one): 409, the sweep named, nothing touched', async () => {
    const d = setup(m.mode);
    d.setState({ traced: 'on' });
    const { err } = await runCli([m.mode, 'default/web']);
    expect(err).toMatchObject({
      status: 409,
      message: expect.stringMatching(/already running on dplab-\w+-worker/),
      fix: expect.stringContaining('--sweep'),
    });
    expect(d.commandLines().some((l) => l.includes(m.enable) || l.includes(m.remove))).toBe(false);
    // The sweep removes it.
    const swept = await runCli([m.mode, '--sweep', '--node', `dplab-${m.mode}-worker`]);
    expect(swept.err).toBeNull();
    expect(swept.out).toMatch(/dplab-\w+-worker: removed /);
    expect(d.commandLines().some((l) => l.includes(m.remove))).toBe(true);
  });

  it('Ctrl-C while the requests hang: the command ends, and the trace rule or table is removed first', async () => {
    const d = setup(m.mode, { requestDelayMs: 20_000 });
    const ctl = new AbortController();
    const running = runCli([m.mode, 'default/web'], ctl.signal);
    const until = Date.now() + 30_000;
    while (!d.commandLines().some((l) => l.includes(' curl ')) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    ctl.abort();
    const { err } = await running;
    expect(err).toBeTruthy();
    expect(d.commandLines().some((l) => l.includes(m.remove))).toBe(true);
    expect(d.state().traced).toBe('off');
  });
});

// Cilium: nothing turned on; the monitor runs in the node's agent (kubectl exec), replays the real
// capture (fixtures/cilium-monitor/), and is what the trace removes at its end.
function setupCilium(opts: CiliumTraceScenario = {}) {
  const d = installDoubles({ rules: ciliumTraceRules(opts) });
  mkdirSync(join(d.env.DPLAB_STATE_DIR, 'kube'), { recursive: true });
  writeFileSync(join(d.env.DPLAB_STATE_DIR, 'kube', 'dplab-cilium.yaml'), 'apiVersion: v1\n');
  return d;
}

const AGENT = 'kubectl --kubeconfig';
const LIST = /exec cilium-w1 -c cilium-agent -- sh -c [\s\S]*\/proc\/[\s\S]* sh DPLAB_TRACE=dplab-trace$/;
const KILL = /exec cilium-w1 -c cilium-agent -- sh -c [\s\S]*kill [\s\S]* sh 4242$/;
const MONITOR =
  /exec cilium-w1 -c cilium-agent -- sh -c .* dplab-trace \d+ env DPLAB_TRACE=dplab-trace cilium-dbg monitor -t trace -t trace-sock -t drop -v$/;

describe('dplab trace cilium (test doubles, captured monitor output)', { timeout: 60_000 }, () => {
  it('from a pod: lists (nothing), starts the monitor in the node’s agent, sends, ends the monitor, and prints where each went', async () => {
    const d = setupCilium();
    const { out, err } = await runCli(['cilium', 'tr/web', '--from', 'tr/client', '--count', '3']);
    expect(err).toBeNull();
    expect(out.split('\n').slice(0, 5)).toEqual([
      'dplab-cilium-worker, cilium-monitor: tcp 10.99.149.63:80 from 10.247.1.57',
      '  1. 10.247.1.57:60532 → sock pre-xlate-fwd → to-endpoint → chosen at connect(): 10.247.1.182:8080   (tr/web)',
      '  2. 10.247.1.57:54822 → to-overlay → chosen at connect(): 10.247.2.183:8080   (tr/web)',
      '  3. 10.247.1.57:54832 → to-overlay → chosen at connect(): 10.247.2.183:8080   (tr/web)',
      "  chosen at connect(): the packet never carried the ClusterIP; the socket load balancer put the backend's address in the socket before the first packet.",
    ]);
    expect(out).toMatch(/10\.247\.1\.182:8080 +1 +share 50%.*\n +10\.247\.2\.183:8080 +2 +share 50%/);
    const lines = d.commandLines().filter((l) => l.startsWith(AGENT) || l.startsWith('docker'));
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    const curls = lines.filter((l) => / -n tr exec client -- curl /.test(l));
    expect(curls).toHaveLength(3);
    // Listed first (no monitor), the monitor under `timeout` in the agent, the requests from the pod, the monitor killed, listed again.
    expect(at(LIST)).toBeGreaterThanOrEqual(0);
    expect(at(LIST)).toBeLessThan(at(MONITOR));
    expect(at(MONITOR)).toBeLessThan(lines.indexOf(curls[0]));
    expect(at(KILL)).toBeGreaterThan(lines.lastIndexOf(curls[2]));
    expect(LIST.test(lines.at(-1) ?? '')).toBe(true);
    // Nothing ran in the node itself, nothing was turned on.
    expect(lines.some((l) => l.startsWith('docker exec'))).toBe(false);
    expect(d.state().traced).toBe('off');
  });

  it('--json is the wire shape, with where each backend was chosen', async () => {
    setupCilium();
    const { out, err } = await runCli(['cilium', 'tr/web', '--from', 'tr/client', '--count', '3', '--json']);
    expect(err).toBeNull();
    const r = traceResultSchema.parse(JSON.parse(out));
    expect(r.method).toBe('cilium-monitor');
    expect(r.requests.map((q) => [q.outcome, q.packet.rewriteAt, q.backend?.ip, q.service])).toEqual([
      ['dnat', 'connect', '10.247.1.182', 'tr/web'],
      ['dnat', 'connect', '10.247.2.183', 'tr/web'],
      ['dnat', 'connect', '10.247.2.183', 'tr/web'],
    ]);
  });

  it('a Service without endpoints: nothing on the wire, and the note says why', async () => {
    setupCilium();
    const { out, err } = await runCli(['cilium', 'tr/web-idle', '--from', 'tr/client', '--count', '2']);
    expect(err).toBeNull();
    expect(out).toContain(
      'note: 2 of 2 requests were not seen in the trace window (Cilium refuses a connection to a Service without backends at connect()',
    );
  });

  it.each([
    [['tr/nope'], /Service tr\/nope does not exist/],
    [['tr/web', '--from', 'tr/ghost'], /Pod tr\/ghost does not exist/],
    [['tr/web', '--node', 'dplab-cilium-worker9'], /Unknown node "dplab-cilium-worker9"/],
  ] as const)('%j: a clear error, and no monitor started', async (args, message) => {
    const d = setupCilium();
    const { err } = await runCli(['cilium', ...args]);
    expect(err).toBeInstanceOf(DplabError);
    expect((err as DplabError).message).toMatch(message);
    expect(d.commandLines().some((l) => MONITOR.test(l))).toBe(false);
  });

  it('a node without an agent pod: 409 naming the agent', async () => {
    setupCilium();
    const { err } = await runCli(['cilium', 'tr/web', '--node', 'dplab-cilium-worker2']);
    expect(err).toMatchObject({ status: 409, message: 'No cilium agent pod runs on dplab-cilium-worker2.' });
  });

  it('a monitor already running (another trace, or a runner that died): 409, the sweep named, and the sweep ends it', async () => {
    const d = setupCilium();
    d.setState({ traced: 'on' });
    const { err } = await runCli(['cilium', 'tr/web', '--from', 'tr/client']);
    expect(err).toMatchObject({
      status: 409,
      message: 'A trace is already running on dplab-cilium-worker.',
      fix: expect.stringContaining('--sweep'),
    });
    expect(d.commandLines().some((l) => MONITOR.test(l) || KILL.test(l))).toBe(false);
    const swept = await runCli(['cilium', '--sweep', '--node', 'dplab-cilium-worker']);
    expect(swept.err).toBeNull();
    expect(swept.out).toBe('dplab-cilium-worker: removed 4242 cilium-dbg monitor -t trace -t trace-sock -t drop -v\n');
    expect(d.state().traced).toBe('off');
  });

  it('two traces at once from one runner: the second is refused before it touches the node', async () => {
    const d = setupCilium({ requestDelayMs: 1500 });
    const first = runCli(['cilium', 'tr/web', '--from', 'tr/client', '--count', '1']);
    const until = Date.now() + 30_000;
    while (!d.commandLines().some((l) => MONITOR.test(l)) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    const second = await runCli(['cilium', 'tr/web', '--from', 'tr/client', '--count', '1']);
    expect(second.err).toMatchObject({ status: 409, message: 'A trace is already running on dplab-cilium-worker.' });
    expect((await first).err).toBeNull();
    expect(d.commandLines().filter((l) => MONITOR.test(l))).toHaveLength(1);
  });

  it('the agent vanishes mid-trace: a clear error saying what to do', async () => {
    setupCilium({ agentGone: true });
    const { err } = await runCli(['cilium', 'tr/web', '--from', 'tr/client', '--count', '2']);
    expect(err).toMatchObject({
      status: 409,
      message: 'The Cilium agent on dplab-cilium-worker (pod cilium-w1) went away during the trace.',
      fix: expect.stringMatching(/kubectl -n kube-system get pods -l k8s-app=cilium -o wide.*then trace again/),
    });
  });

  it('Ctrl-C while the requests hang: the command ends, and the monitor is ended first', async () => {
    const d = setupCilium({ requestDelayMs: 20_000 });
    const ctl = new AbortController();
    const running = runCli(['cilium', 'tr/web', '--from', 'tr/client'], ctl.signal);
    const until = Date.now() + 30_000;
    while (!d.commandLines().some((l) => / exec client -- curl /.test(l)) && Date.now() < until)
      await new Promise((r) => setTimeout(r, 50));
    ctl.abort();
    const { err } = await running;
    expect(err).toBeTruthy();
    expect(d.commandLines().some((l) => KILL.test(l))).toBe(true);
    expect(d.state().traced).toBe('off');
  });
});

describe('Ctrl-C of the real `dplab trace` process', { timeout: 90_000 }, () => {
  it('SIGINT mid-trace: the process ends the monitor before it exits (it is not killed by the signal)', async () => {
    const d = setupCilium({ requestDelayMs: 20_000 });
    const child = spawn(process.execPath, [join(projectRoot, 'scripts', 'dplab.mjs'), 'trace', 'cilium', 'tr/web', '--from', 'tr/client'], {
      cwd: projectRoot,
      env: { ...process.env, ...d.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (b) => (err += b));
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (code, sig) => resolve([code, sig])));
    const until = Date.now() + 60_000;
    while (!d.commandLines().some((l) => / exec client -- curl /.test(l)) && Date.now() < until)
      await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGINT');
    const [code, signal] = await exited;
    expect(err).toContain('Stopping the trace and removing its rules…');
    expect(signal).toBeNull();
    expect(code).toBe(1);
    expect(d.commandLines().some((l) => KILL.test(l))).toBe(true);
    expect(d.state().traced).toBe('off');
  });
});

describe('POST /api/dataplane/:mode/trace', { timeout: 60_000 }, () => {
  let runner: TestRunner;
  beforeAll(async () => {
    runner = await serveRunner({});
  });
  afterAll(() => runner.close());

  it('traces through the same engine and answers the wire shape', async () => {
    setup('nftables');
    const r = await runner.call('POST', '/api/dataplane/nftables/trace', { service: 'default/web', count: 6 });
    expect(r.status).toBe(200);
    expect(traceResultSchema.parse(r.json).requests).toHaveLength(6);
  });

  it('traces in Cilium mode too (no 501)', async () => {
    setupCilium();
    const r = await runner.call('POST', '/api/dataplane/cilium/trace', { service: 'tr/web', from: 'tr/client', count: 3 });
    expect(r.status).toBe(200);
    expect(traceResultSchema.parse(r.json).tally.map((t) => t.count)).toEqual([1, 2]);
  });

  it.each([
    ['/api/dataplane/nope/trace', { service: 'default/web' }, 404, /Unknown mode "nope"/],
    ['/api/dataplane/iptables/trace', { service: 'default/web', count: 500 }, 400, /Bad trace request: count/],
    ['/api/dataplane/iptables/trace', { service: 'x; reboot' }, 400, /is not a Service/],
    ['/api/dataplane/ipvs/trace', { service: 'default/web' }, 501, /not built for ipvs/],
  ])('%s %j → %i', async (path, body, status, message) => {
    setup('iptables');
    const r = await runner.call('POST', path, body);
    expect(r.status).toBe(status);
    expect(r.json.error.message).toMatch(message);
  });

  it('refuses a POST from another origin (the security contract), before anything runs', async () => {
    const d = setup('iptables');
    const res = await fetch(`${runner.base}/api/dataplane/iptables/trace`, {
      method: 'POST',
      headers: { authorization: 'Bearer runner-http-test-token', origin: 'http://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ service: 'default/web' }),
    });
    expect(res.status).toBe(403);
    expect(d.calls()).toEqual([]);
  });
});
