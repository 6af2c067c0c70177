// The trace parsers on real captures (fixtures/xtables-monitor/, fixtures/nft-monitor/: the
// kernel's own output, README there), read against the model of the rules they were captured on.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findService, parse, ParseError } from '../index.ts';
import type { PacketTrace } from '../../wire/trace.ts';
import { traceResultSchema } from '../../wire/trace.ts';
import { parseNftMonitor } from './nft-monitor.ts';
import { parseXtablesMonitor } from './xtables-monitor.ts';
import { resolveRequest } from './resolve.ts';
import { traceResult } from './result.ts';
import { iptablesTrace } from './iptables-method.ts';
import { nftTrace } from './nft-method.ts';
import { traceFlow } from './flow.ts';

const FIX = join(import.meta.dirname, '..', 'fixtures');
const read = (p: string) => readFileSync(join(FIX, p), 'utf8');

const KINDS = [
  {
    name: 'xtables-monitor',
    parseTrace: parseXtablesMonitor,
    rules: (s: string) => parse('iptables-save', read(`iptables-save/${s}.txt`)),
    clusterIp: ['KUBE-SERVICES', 'KUBE-SVC-LOLE4ISW44XBNF3G'],
    nodePort: ['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-EXT-LOLE4ISW44XBNF3G', 'KUBE-SVC-LOLE4ISW44XBNF3G'],
    endpoint: /^KUBE-SEP-/,
    rejectPath: ['KUBE-SERVICES'],
    rejectRule: /"default\/web-idle has no endpoints" .* -j REJECT/,
    method: iptablesTrace,
  },
  {
    name: 'nft-monitor',
    parseTrace: parseNftMonitor,
    rules: (s: string) => parse('nft-json', read(`nft-json/${s}.json`)),
    clusterIp: ['services', 'service-PFISGYVC-default/web/tcp/'],
    nodePort: ['services', 'external-PFISGYVC-default/web/tcp/', 'service-PFISGYVC-default/web/tcp/'],
    endpoint: /^endpoint-\w+-default\/web\/tcp\/__/,
    rejectPath: ['service-endpoints-check', 'reject-chain'],
    rejectRule: /^reject$/,
    method: nftTrace,
  },
] as const;

describe.each(KINDS)('$name trace of real kernel output', (k) => {
  const packets = (s: string): PacketTrace[] => k.parseTrace(read(`${k.name}/${s}.txt`));

  it('a ClusterIP request: the Service chain, one endpoint chain, and its DNAT to the address the packet then carried', () => {
    const model = k.rules('clusterip');
    const web = findService(model, 'default/web')!.frontends.find((f) => f.type === 'ClusterIP')!;
    const got = packets('clusterip');
    expect(got).toHaveLength(6);
    for (const p of got) {
      const r = resolveRequest(p, model);
      expect(r.outcome).toBe('dnat');
      expect(r.service).toBe('default/web');
      expect(r.frontend).toEqual({ type: 'ClusterIP', ip: web.ip, port: web.port, protocol: 'TCP' });
      expect(r.path.slice(0, -1)).toEqual(k.clusterIp);
      expect(r.path.at(-1)).toMatch(k.endpoint);
      // The endpoint chain the rules went to is the backend the model names for it, and the kernel's rewrite agrees.
      expect(r.backend?.via).toBe(r.path.at(-1));
      expect(p.rewrittenTo).toEqual({ ip: r.backend!.ip, port: r.backend!.port });
      expect(r.backend!.share).toBeCloseTo(1 / 3, 6);
      expect(p.to).toEqual({ ip: web.ip, port: web.port });
      expect(p.verdict).toBe('accept');
    }
  });

  it('a Service without endpoints: the rule that rejects is the last step', () => {
    const model = k.rules('no-endpoints');
    const got = packets('no-endpoints');
    expect(got).toHaveLength(2);
    for (const p of got) {
      const r = resolveRequest(p, model);
      expect(r).toMatchObject({ outcome: 'reject', service: 'default/web-idle', backend: null, path: k.rejectPath });
      expect(p.steps.at(-1)).toMatchObject({ kind: 'rule', verdict: 'drop' });
      expect(p.steps.at(-1)!.rule).toMatch(k.rejectRule);
      expect(p.rewrittenTo).toBeNull();
    }
  });

  it('a NodePort request on the node address goes through the external chain to a backend', () => {
    const model = k.rules('nodeport');
    for (const p of packets('nodeport')) {
      const r = resolveRequest(p, model);
      expect(r).toMatchObject({ outcome: 'dnat', service: 'default/web', frontend: { type: 'NodePort' } });
      expect(r.path.slice(0, -1)).toEqual(k.nodePort);
      expect(r.backend?.via).toBe(r.path.at(-1));
    }
  });

  it('from a client pod: enters at prerouting, reaches an endpoint, and the RETURN out of the masquerade chain is read as return', () => {
    const model = k.rules('clusterip');
    const got = packets('clusterip-from-pod');
    expect(got).toHaveLength(3);
    for (const p of got) {
      const r = resolveRequest(p, model);
      expect(p.from.ip).toBe('10.244.3.5');
      expect(p.steps[0].chain.toLowerCase()).toBe('prerouting');
      expect(r).toMatchObject({ outcome: 'dnat', service: 'default/web' });
      expect(r.path.slice(0, -1)).toEqual(k.clusterIp);
      expect(r.backend?.via).toBe(r.path.at(-1));
      // xtables-monitor prints NFT_RETURN as 0xfffffffb; nft says "return".
      expect(p.steps.some((s) => s.verdict === 'return' && s.kind === 'rule')).toBe(true);
      expect(p.steps.every((s) => !s.verdict.startsWith('0x'))).toBe(true);
    }
  });

  it('the result counts each backend beside its share, and fits the wire schema', () => {
    const model = k.rules('clusterip');
    const got = packets('clusterip');
    const web = findService(model, 'default/web')!.frontends.find((f) => f.type === 'ClusterIP')!;
    const result = traceResult({
      node: 'worker',
      method: k.method,
      flow: traceFlow({ ip: web.ip, port: web.port }),
      model,
      packets: got,
      sent: 7,
    });
    expect(result.tally.map((t) => `${t.ip}:${t.port}`)).toEqual(web.backends.map((b) => `${b.ip}:${b.port}`));
    expect(result.tally.reduce((a, t) => a + t.count, 0)).toBe(6);
    for (const t of result.tally) expect(t.share).toBeCloseTo(1 / 3, 6);
    expect(result.notes.join(' ')).toMatch(/1 of 7 requests were not seen/);
    expect(traceResultSchema.safeParse(result).success).toBe(true);
  });

  it('every step names its table and chain, and the trace rules met first are ours', () => {
    for (const p of packets('clusterip')) {
      expect(p.steps[0].rule).toMatch(/dplab-trace:/);
      for (const s of p.steps) expect(s.table && s.chain).toBeTruthy();
    }
  });

  it('a line it does not understand is a ParseError naming the line', () => {
    const text = `${read(`${k.name}/clusterip.txt`)}garbage here\n`;
    expect(() => k.parseTrace(text)).toThrow(ParseError);
    expect(() => k.parseTrace(text)).toThrow(/garbage here/);
  });
});

describe('trace commands', () => {
  const flow = traceFlow({ ip: '10.96.45.112', port: 80, client: '10.244.1.5' });

  it('iptables: a TRACE rule at PREROUTING and OUTPUT of raw, scoped to the flow and its first packet, marked', () => {
    const [pre, out] = iptablesTrace.enable(flow, 'abc12345');
    expect(pre.argv.join(' ')).toBe(
      'iptables -w 5 -t raw -I PREROUTING 1 -s 10.244.1.5/32 -d 10.96.45.112/32 -p tcp -m tcp --dport 80 --tcp-flags SYN,ACK,FIN,RST SYN -m comment --comment dplab-trace:abc12345 -j TRACE',
    );
    expect(out.argv).toContain('OUTPUT');
  });

  it('iptables: every marked rule in `-S` becomes its -D, quotes and all', () => {
    const listing = [
      '-P OUTPUT ACCEPT',
      '-A PREROUTING -d 10.96.45.112/32 -p tcp -m tcp --dport 80 --tcp-flags FIN,SYN,RST,ACK SYN -m comment --comment "dplab-trace:abc12345" -j TRACE',
      '-A OUTPUT -j CT --notrack',
    ].join('\n');
    const found = iptablesTrace.leftovers(listing);
    expect(found).toHaveLength(1);
    expect(iptablesTrace.remove(found)[0].argv).toEqual([
      'iptables',
      '-w',
      '5',
      '-t',
      'raw',
      '-D',
      'PREROUTING',
      '-d',
      '10.96.45.112/32',
      '-p',
      'tcp',
      '-m',
      'tcp',
      '--dport',
      '80',
      '--tcp-flags',
      'FIN,SYN,RST,ACK',
      'SYN',
      '-m',
      'comment',
      '--comment',
      'dplab-trace:abc12345',
      '-j',
      'TRACE',
    ]);
  });

  it('nft: one table of its own, created (so a second trace fails), with a chain ahead of raw per hook', () => {
    const [cmd] = nftTrace.enable(flow, 'abc12345');
    expect(cmd.input).toMatch(/^create table ip dplab-trace /);
    expect(cmd.input).toContain('add chain ip dplab-trace output { type filter hook output priority raw - 1; policy accept; }');
    expect(cmd.input).toContain(
      'add rule ip dplab-trace prerouting ip saddr 10.244.1.5 ip daddr 10.96.45.112 tcp dport 80 tcp flags syn / fin,syn,rst,ack meta nftrace set 1 comment "dplab-trace:abc12345"',
    );
    expect(nftTrace.leftovers('table ip kube-proxy\ntable ip dplab-trace\n')).toEqual(['table ip dplab-trace']);
    expect(nftTrace.remove(['table ip dplab-trace'])[0].argv).toEqual(['nft', 'delete', 'table', 'ip', 'dplab-trace']);
  });

  it('refuses what is not a flow before it reaches a command line', () => {
    expect(() => traceFlow({ ip: '10.96.0.1; reboot', port: 80 })).toThrow(/not an IPv4 address/);
    expect(() => traceFlow({ ip: '10.96.0.1', port: 70000 })).toThrow(/not a port/);
    expect(() => traceFlow({ ip: '10.96.0.1', port: 80, protocol: 'icmp' })).toThrow(/tcp, udp or sctp/);
  });
});
