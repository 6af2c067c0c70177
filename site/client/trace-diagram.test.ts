// A trace drawn on the explorer's diagram, on real data: the diagram the runner draws from the
// dataplane fixtures (scripts/dataplane/mermaid.ts) and the trace read from the kernel's captured
// output on those same rules (scripts/dataplane/fixtures/{xtables-monitor,nft-monitor,cilium-monitor}/).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findService, parse } from '../../scripts/dataplane/index.ts';
import { toMermaid } from '../../scripts/dataplane/mermaid.ts';
import { CILIUM_SERVICES } from '../../test/fixtures/trace-scenario.ts';
import { ciliumTrace } from '../../scripts/dataplane/trace/cilium-method.ts';
import { iptablesTrace } from '../../scripts/dataplane/trace/iptables-method.ts';
import { nftTrace } from '../../scripts/dataplane/trace/nft-method.ts';
import { traceFlow } from '../../scripts/dataplane/trace/flow.ts';
import { traceResult } from '../../scripts/dataplane/trace/result.ts';
import type { TraceResult } from '../../scripts/wire/trace.ts';
import { drawTrace, locateTrace, parseFlowchart } from './trace-diagram.ts';

const FIX = join(import.meta.dirname, '..', '..', 'scripts', 'dataplane', 'fixtures');
const read = (p: string) => readFileSync(join(FIX, p), 'utf8');
const COLOURS = { stroke: '#c2410c', chosenFill: '#ffedd5', chosenText: '#111111' };

const KINDS = [
  {
    name: 'iptables',
    format: 'iptables-save',
    rules: (s: string) => `iptables-save/${s}.txt`,
    capture: 'xtables-monitor',
    method: iptablesTrace,
  },
  { name: 'nftables', format: 'nft-json', rules: (s: string) => `nft-json/${s}.json`, capture: 'nft-monitor', method: nftTrace },
] as const;

/** The diagram of `service` and the trace of the capture `scenario`, both from the same rules. */
function fixture(k: (typeof KINDS)[number], scenario: string, service = 'default/web', rules = scenario) {
  const model = parse(k.format, read(k.rules(rules)));
  const view = findService(model, service)!;
  // The netfilter parsers read every traced packet (the target is for Cilium's, which sees only translated ones).
  const packets = k.method.parse(read(`${k.capture}/${scenario}.txt`), { flow: traceFlow({ ip: '0.0.0.0', port: 1 }), backends: [] });
  const to = packets[0].to;
  const trace = traceResult({ node: 'worker', method: k.method, flow: traceFlow(to), model, packets, sent: packets.length });
  return { mermaid: toMermaid(view, model.format), trace };
}

const labelOf = (source: string, id: string) => parseFlowchart(source).nodes.find((n) => n.id === id)!.lines;

describe.each(KINDS)('the trace on the $name diagram', (k) => {
  it('a ClusterIP trace: the frontend, its chains and the chosen backends are marked, each backend with its count', () => {
    const { mermaid, trace } = fixture(k, 'clusterip');
    const chart = parseFlowchart(mermaid);
    const at = locateTrace(chart, trace);
    expect(at.frame).toBe('f0');
    const text = (id: string) => chart.nodes.find((n) => n.id === id)!.lines.join('');
    const walked = at.walked.map(text);
    expect(walked[0]).toMatch(/^packet to10\.96\.45\.112:80\/TCP/);
    const chains =
      k.name === 'iptables'
        ? ['KUBE-SERVICES', 'KUBE-SVC-LOLE4ISW44XBNF3G']
        : ['services', '@service-ips', 'service-PFISGYVC-default/web/tcp/'];
    for (const c of chains) expect(walked).toContain(c);
    // Every backend a request went to: its own chain and its final box; none other.
    const got = trace.tally.filter((t) => t.count > 0);
    expect(at.chosen).toHaveLength(got.length);
    for (const t of trace.tally) {
      const final = chart.nodes.find((n) => n.lines.at(-1)!.endsWith(`${t.ip}:${t.port}`))!;
      expect(at.chosen.includes(final.id)).toBe(t.count > 0);
      expect(at.counts.get(final.id)).toBe(t.count);
      expect(at.walked.some((id) => text(id).endsWith(t.via!))).toBe(t.count > 0);
    }
    // Lines: every one between marked boxes, never the invisible ones that stack the backends.
    for (const i of at.links) expect(chart.links[i].kind).not.toBe('invisible');
    const lit = new Set(at.links);
    const solid = chart.links.filter((l) => l.kind === 'solid');
    const expected = solid.filter(
      (l) => (at.walked.includes(l.from) || l.from.startsWith('b')) && (at.walked.includes(l.to) || l.to.startsWith('b')),
    );
    expect([...lit].sort()).toEqual(expected.map((l) => l.index).sort());
    expect(chart.links.filter((l) => l.to.startsWith('b')).every((l) => lit.has(l.index))).toBe(true);
  });

  it('draws it: classes on the boxes, the lines styled by their index, the counts in the backends’ labels', () => {
    const { mermaid, trace } = fixture(k, 'clusterip');
    const { source, located } = drawTrace(mermaid, trace, COLOURS);
    const lines = source.trimEnd().split('\n');
    expect(lines).toContain(`  class ${located.chosen.join(',')} dplabChosen`);
    expect(lines.find((l) => l.startsWith('  class ') && l.endsWith(' dplabWalked'))).toBeDefined();
    expect(lines.at(-1)).toBe(`  linkStyle ${located.links.join(',')} stroke:${COLOURS.stroke},stroke-width:3px`);
    for (const t of trace.tally) {
      const final = parseFlowchart(source).nodes.find((n) => n.lines.includes(`${t.ip}:${t.port}`))!;
      expect(final.lines.at(-1)).toBe(`${t.count} of ${trace.requests.length} traced requests`);
    }
    // Only added to: the boxes and links keep their numbers, so the styles land where they were aimed.
    const before = parseFlowchart(mermaid);
    const after = parseFlowchart(source);
    expect(after.links).toEqual(before.links);
    expect(after.nodes.map((n) => n.id)).toEqual(before.nodes.map((n) => n.id));
  });

  it('a NodePort trace marks the NodePort frontend, not the ClusterIP one drawn above it', () => {
    const { mermaid, trace } = fixture(k, 'nodeport');
    const chart = parseFlowchart(mermaid);
    expect(new Set(chart.nodes.map((n) => n.frame)).size).toBeGreaterThan(1);
    const at = locateTrace(chart, trace);
    const frame = chart.nodes.find((n) => n.id === at.walked[0])!;
    expect(frame.lines.join(' ')).toMatch(/NodePort/);
    expect(at.walked.every((id) => chart.nodes.find((n) => n.id === id)!.frame === at.frame)).toBe(true);
    expect(at.chosen.length).toBeGreaterThan(0);
  });

  it('a refused request: the line to the rejecting box is marked, no backend', () => {
    const { mermaid, trace } = fixture(k, 'no-endpoints', 'default/web-idle');
    const chart = parseFlowchart(mermaid);
    const at = locateTrace(chart, trace);
    expect(at.chosen).toEqual([]);
    const last = chart.nodes.find((n) => n.id === at.walked.at(-1))!;
    expect(last.lines.join(' ')).toMatch(/rejected|no endpoints/);
  });

  it('a trace whose frontend is not in the diagram leaves it as it was', () => {
    const { trace } = fixture(k, 'clusterip');
    const other: TraceResult = {
      ...trace,
      requests: trace.requests.map((r) => ({ ...r, frontend: { ...r.frontend!, ip: '10.96.0.99' } })),
    };
    const { mermaid } = fixture(k, 'clusterip');
    expect(drawTrace(mermaid, other, COLOURS).source).toBe(mermaid);
    expect(labelOf(mermaid, 'n0')[0]).toBe('packet to');
  });
});

describe('the trace on the Cilium diagram (the real capture, fixtures/cilium-monitor/)', () => {
  const model = parse('cilium-json', CILIUM_SERVICES);
  const flow = traceFlow({ ip: '10.99.149.63', port: 80, client: '10.247.1.57' });
  const backends = [
    { ip: '10.247.1.182', port: 8080 },
    { ip: '10.247.2.183', port: 8080 },
  ];
  const packets = ciliumTrace.parse(read('cilium-monitor/clusterip-from-pod.txt'), { flow, backends });
  const trace = traceResult({ node: 'worker', method: ciliumTrace, flow, model, packets, sent: 3 });
  const mermaid = toMermaid(findService(model, 'tr/web')!, model.format);

  it('marks connect(), the socket and the service map (no chain names them), and each backend with its count', () => {
    const chart = parseFlowchart(mermaid);
    const at = locateTrace(chart, trace);
    const text = (id: string) => chart.nodes.find((n) => n.id === id)!.lines.join(' ');
    expect(at.frame).toBe('f0');
    expect(at.walked.map(text).sort()).toEqual([
      '50.0% equal (random) backend 10.247.1.182:8080',
      '50.0% equal (random) backend 10.247.2.183:8080',
      'connect() to 10.99.149.63:80/TCP (ClusterIP tr/web)',
      'service map 10.99.149.63:80/TCP',
      'socket connect() / tc',
    ]);
    expect([...at.counts].map(([id, n]) => [text(id).split(' ').slice(-2).join(' '), n])).toEqual([
      ['backend 10.247.1.182:8080', 1],
      ['backend 10.247.2.183:8080', 2],
    ]);
    expect(at.chosen).toHaveLength(2);
    // The line from the service map to the backends' box is lit.
    expect(at.links.map((i) => chart.links[i]).some((l) => l.to === 'b1')).toBe(true);
  });
});
