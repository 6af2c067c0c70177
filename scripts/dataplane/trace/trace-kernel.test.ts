// Real kernel: kube-proxy's fixture rules in a netns-lab node with a pod per backend, traced by the
// engine's own commands (xtables-monitor in iptables mode, nft monitor in nftables mode). The
// path each request took must end at the pod that answered it, a Service without endpoints shows
// the rule that rejects, and no trace rule or table is left after a trace, an abort, or a crash
// followed by the sweep (asserted by listing the node's ruleset).
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findService, parse, type DataplaneModel, type Frontend } from '../index.ts';
import { NetnsLab, whyNot, type Answer, type Outcome } from '../../../test/dataplane/netns-lab.ts';
import { namespaceNode } from './node.ts';
import { runTrace } from './session.ts';
import { traceFlow } from './flow.ts';
import { TRACE_METHOD } from './methods.ts';
import { listLeftovers, sweepNode } from './sweep.ts';
import { traceResult } from './result.ts';

const reason = whyNot();
if (reason) console.warn(`trace kernel tests skipped: ${reason}`);

const FIX = join(import.meta.dirname, '..', 'fixtures');
const ROOT = join(import.meta.dirname, '..', '..', '..');
const NODE_IP = '172.18.0.3';
const N = 6;
/** A client pod on the node, inside the cluster CIDR (no backend there). */
const CLIENT_IP = '10.244.3.5';

const MODES = [
  {
    mode: 'iptables',
    format: 'iptables-save',
    file: 'iptables-save',
    ext: 'txt',
    svc: /^KUBE-SVC-/,
    ep: /^KUBE-SEP-/,
    first: 'KUBE-SERVICES',
    list: ['iptables-save'],
  },
  {
    mode: 'nftables',
    format: 'nft-json',
    file: 'nft-json',
    ext: 'json',
    svc: /^service-/,
    ep: /^endpoint-/,
    first: 'services',
    list: ['nft', 'list', 'ruleset'],
  },
] as const;

describe.skipIf(reason !== null)(`tracing a request through real rules${reason ? ` (skipped: ${reason})` : ''}`, () => {
  describe.each(MODES)('$mode', (m) => {
    const method = TRACE_METHOD[m.mode]!;
    let lab: NetnsLab;
    let model: DataplaneModel;
    let web: Frontend;
    let idle: Frontend;
    const node = () => namespaceNode(lab.node);
    const ruleset = () => lab.exec(lab.node, [...m.list]);
    const expectClean = async () => {
      expect(await listLeftovers(node(), method)).toEqual([]);
      expect(ruleset()).not.toContain('dplab-trace');
      // The monitor ends with the trace: nothing of ours runs in the node's namespace.
      expect(monitorsIn(lab.node)).toEqual([]);
    };

    /** n requests from the node to the frontend, traced; what the client got and what the trace says. */
    const traceRequests = async (fe: Frontend, n: number) => {
      let outcomes: Outcome[] = [];
      const flow = traceFlow({ ip: fe.ip, port: fe.port });
      const session = await runTrace({
        method,
        node: node(),
        flow,
        send: async (signal) => (outcomes = await lab.requestAsync(fe.ip, fe.port, n, { signal })).length,
        expected: n,
        windowMs: 10_000,
      });
      return { outcomes, result: traceResult({ node: lab.node, method, flow, model, packets: session.packets, sent: session.sent }) };
    };

    /** A trace that wants nothing but to start: refused while another is on. */
    const secondTrace = () =>
      runTrace({
        method,
        node: node(),
        flow: traceFlow({ ip: web.ip, port: web.port }),
        send: async () => 0,
        expected: 0,
        windowMs: 1_000,
      });

    beforeAll(async () => {
      const text = readFileSync(join(FIX, m.file, `no-endpoints.${m.ext}`), 'utf8');
      model = parse(m.format, text);
      web = findService(model, 'default/web')!.frontends.find((f) => f.type === 'ClusterIP')!;
      idle = findService(model, 'default/web-idle')!.frontends.find((f) => f.type === 'ClusterIP')!;
      lab = new NetnsLab(NODE_IP);
      await lab.addBackends(web.backends.map((b) => ({ ip: b.ip, port: b.port })));
      if (m.format === 'iptables-save') lab.loadIptables(text);
      else lab.loadNftJson(text);
    });
    afterAll(async () => {
      await lab?.close();
    });

    it(`${N} ClusterIP requests: ${m.first} → the Service chain → an endpoint chain whose DNAT is the pod that answered`, async () => {
      const { outcomes, result } = await traceRequests(web, N);
      const answered = outcomes.map((o) => (o as Extract<Outcome, { ok: true }>).answer as Answer);
      expect(answered.every(Boolean), JSON.stringify(outcomes)).toBe(true);
      expect(result.requests).toHaveLength(N);
      // Requests went one after another, so the kernel reported them in that order.
      result.requests.forEach((r, i) => {
        expect(r.outcome).toBe('dnat');
        expect(r.service).toBe('default/web');
        expect(r.path[0]).toBe(m.first);
        expect(r.path[1]).toMatch(m.svc);
        expect(r.path[2]).toMatch(m.ep);
        expect(r.backend).toMatchObject({ ip: answered[i].ip, port: answered[i].port, via: r.path[2] });
      });
      expect(result.tally.reduce((a, t) => a + t.count, 0)).toBe(N);
      await expectClean();
    });

    it("from a client pod (the PREROUTING hook), scoped to it: the node's own requests meanwhile are not traced", async () => {
      const client = lab.addPod(CLIENT_IP).ns;
      // A node forwards between its pods' veths.
      lab.exec(lab.node, ['sysctl', '-qw', 'net.ipv4.ip_forward=1']);
      let fromPod: Outcome[] = [];
      let fromNode: Outcome[] = [];
      const flow = traceFlow({ ip: web.ip, port: web.port, client: CLIENT_IP });
      const session = await runTrace({
        method,
        node: node(),
        flow,
        send: async (signal) => {
          [fromPod, fromNode] = await Promise.all([
            lab.requestAsync(web.ip, web.port, 3, { signal, ns: client }),
            lab.requestAsync(web.ip, web.port, 3, { signal }),
          ]);
          return fromPod.length;
        },
        expected: 3,
        windowMs: 10_000,
      });
      expect(
        [...fromPod, ...fromNode].every((o) => o.ok),
        JSON.stringify([...fromPod, ...fromNode]),
      ).toBe(true);
      const result = traceResult({ node: lab.node, method, flow, model, packets: session.packets, sent: session.sent });
      expect(result.requests.map((r) => r.packet.from.ip)).toEqual([CLIENT_IP, CLIENT_IP, CLIENT_IP]);
      result.requests.forEach((r, i) => {
        const answer = (fromPod[i] as Extract<Outcome, { ok: true }>).answer;
        expect(r.path.slice(0, 2)).toEqual([m.first, r.path[1]]);
        expect(r.path[1]).toMatch(m.svc);
        expect(r.backend).toMatchObject({ ip: answer.ip, port: answer.port, via: r.path[2] });
        // It came in from the pod's veth: the first hook the kernel reports is prerouting.
        expect(r.packet.steps[0].chain).toMatch(/^PREROUTING$|^prerouting$/);
        // A pod inside the cluster CIDR is not masqueraded: the backend saw the pod itself.
        expect(answer.peer).toBe(CLIENT_IP);
      });
      await expectClean();
    });

    it('a Service without endpoints: the trace ends at the rule that rejects, and the client is refused', async () => {
      const { outcomes, result } = await traceRequests(idle, 2);
      expect(outcomes.map((o) => (o.ok ? 'ok' : o.code))).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
      expect(result.requests).toHaveLength(2);
      for (const r of result.requests) {
        expect(r).toMatchObject({ outcome: 'reject', service: 'default/web-idle', backend: null });
        expect(r.packet.steps.at(-1)!.rule).toMatch(/REJECT|reject/);
      }
      await expectClean();
    });

    it('an abort mid-trace (Ctrl-C) leaves no rule, table or monitor behind', async () => {
      const ctl = new AbortController();
      const trace = runTrace({
        method,
        node: node(),
        flow: traceFlow({ ip: web.ip, port: web.port }),
        send: async () => {
          // Tracing is on now: prove it, then abort as Ctrl-C does.
          expect(await listLeftovers(node(), method)).not.toEqual([]);
          ctl.abort(new Error('Ctrl-C'));
          return new Promise<number>(() => {});
        },
        expected: 1,
        windowMs: 10_000,
        signal: ctl.signal,
      });
      await expect(trace).rejects.toThrow();
      await expectClean();
    });

    it('two traces at once on one node: the second is refused with what to do, the first goes on', async () => {
      let release: () => void = () => {};
      let sending: () => void = () => {};
      const started = new Promise<void>((r) => (sending = r));
      const first = runTrace({
        method,
        node: node(),
        flow: traceFlow({ ip: web.ip, port: web.port }),
        send: () => {
          sending();
          return new Promise<number>((r) => (release = () => r(0)));
        },
        expected: 0,
        windowMs: 10_000,
      });
      await started;
      await expect(secondTrace()).rejects.toThrow(/already running on/);
      release();
      await first;
      await expectClean();
    });

    // nftables only: its `create table` is atomic; iptables has no such guard, the listing is the only one.
    it.runIf(m.mode === 'nftables')(
      'a trace that starts while another is half-way in (the listing was clear a moment ago) leaves the other one alone',
      async () => {
        lab.exec(lab.node, ['nft', 'create', 'table', 'ip', 'dplab-trace']);
        // Its first listing comes back clear, as if the other trace's table came just after it.
        let listings = 0;
        const blind = {
          ...node(),
          exec: (argv: readonly string[], opts?: Parameters<ReturnType<typeof node>['exec']>[1]) =>
            argv.join(' ') === method.list.argv.join(' ') && listings++ === 0 ? node().exec(['true'], opts) : node().exec(argv, opts),
        };
        const err = await runTrace({
          method,
          node: blind,
          flow: traceFlow({ ip: web.ip, port: web.port }),
          send: async () => 0,
          expected: 0,
          windowMs: 1_000,
        }).catch((e: unknown) => e);
        expect(err).toMatchObject({ status: 409, message: expect.stringMatching(/already running/) });
        expect(ruleset()).toContain('table ip dplab-trace');
        await sweepNode(node(), method);
        await expectClean();
      },
    );

    it('a runner killed mid-trace leaves its rules; the sweep finds and removes them all', async () => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'test/fixtures/trace-crash-child.ts', lab.node, m.mode, web.ip, String(web.port)],
        {
          cwd: ROOT,
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the child never started tracing')), 30_000);
        child.stdout!.on('data', (d) => String(d).includes('tracing') && (clearTimeout(timer), resolve()));
      });
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      const left = await listLeftovers(node(), method);
      expect(left.length).toBeGreaterThan(0);
      expect(ruleset()).toContain('dplab-trace');
      // Another runner's trace (or this one, restarted) sees them and says how to clear them.
      const again = secondTrace();
      await expect(again).rejects.toThrow(/already running on/);
      await expect(again).rejects.toMatchObject({ status: 409, fix: expect.stringContaining('--sweep') });
      expect(await listLeftovers(node(), method)).toEqual(left);
      expect(await sweepNode(node(), method)).toEqual(left);
      expect(ruleset()).not.toContain('dplab-trace');
      // The orphaned monitor ends by itself (it runs under `timeout`).
      const until = Date.now() + 10_000;
      while (monitorsIn(lab.node).length && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
      await expectClean();
    });
  });
});

/** The command lines of the processes in a namespace (`ip netns pids`) that are trace monitors. */
function monitorsIn(ns: string): string[] {
  return execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      } catch {
        return '';
      }
    })
    .filter((cmd) => /xtables-monitor|nft .*monitor/.test(cmd));
}
