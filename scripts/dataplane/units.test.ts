import { describe, expect, it } from 'vitest';
import { chainedShares, equalShares, iptablesSavedProbability, kubeProxyProbabilities, weightedShares } from './shares.ts';
import { LABEL_LINE_CHARS, escapeLabel, toMermaid, wrapLabel } from './mermaid.ts';
import { commandsToRead } from './read-commands.ts';
import { hexToIpv4, hexToPort, splitServicePortName } from './addr.ts';
import type { ServiceView } from './model.ts';

describe('shares', () => {
  it.each([1, 2, 3, 5, 10])('kube-proxy probabilities for %i endpoints give each 1/n', (n) => {
    const saved = kubeProxyProbabilities(n).map((p) => (p === null ? null : Number(iptablesSavedProbability(p))));
    for (const s of chainedShares(saved)) expect(s).toBeCloseTo(1 / n, 9);
  });
  it('prints what iptables-save prints', () => {
    expect(iptablesSavedProbability(1 / 3)).toBe('0.33333333349');
    expect(iptablesSavedProbability(1 / 2)).toBe('0.50000000000');
  });
  it('normalises weights and handles all-zero', () => {
    expect(weightedShares([1, 3])).toEqual([0.25, 0.75]);
    expect(weightedShares([0, 0])).toEqual([0, 0]);
    expect(equalShares(4)).toEqual([0.25, 0.25, 0.25, 0.25]);
  });
  it('renormalises when every rule is probabilistic', () => {
    const s = chainedShares([0.5, 0.5]);
    expect(s[0] + s[1]).toBeCloseTo(1, 12);
  });
});

describe('addresses', () => {
  it('decodes /proc/net/ip_vs hex', () => {
    expect(hexToIpv4('0A602D70')).toBe('10.96.45.112');
    expect(hexToPort('1F90')).toBe(8080);
    expect(hexToIpv4('xyz')).toBeNull();
  });
  it('splits service port names', () => {
    expect(splitServicePortName('default/web:http')).toEqual({ service: 'default/web', portName: 'http' });
    expect(splitServicePortName('default/web')).toEqual({ service: 'default/web', portName: null });
    expect(splitServicePortName('not a name')).toBeNull();
  });
});

/** A ClusterIP frontend of default/web as the iptables parser gives it, with `over` changed. */
const frontend = (over: Partial<ServiceView['frontends'][number]> = {}): ServiceView['frontends'][number] => ({
  type: 'ClusterIP',
  ip: '10.96.0.5',
  port: 80,
  protocol: 'TCP',
  portName: null,
  localOnly: false,
  dropsWithoutLocalEndpoints: false,
  affinity: null,
  noBackendVerdict: null,
  path: ['KUBE-SERVICES', 'KUBE-SVC-X'],
  chooser: 'statistic random',
  backends: [],
  ...over,
});

describe('mermaid', () => {
  it('escapes labels', () => {
    expect(escapeLabel('a "b" <c> & d\ne')).toBe('a #quot;b#quot; #lt;c#gt; #amp; d e');
  });
  it('draws backends and empty frontends', () => {
    const view: ServiceView = {
      service: 'default/we"b',
      frontends: [
        frontend({ backends: [{ ip: '10.244.1.2', port: 8080, share: 1, via: 'KUBE-SEP-Y' }] }),
        frontend({
          type: 'NodePort',
          ip: '0.0.0.0',
          port: 30080,
          localOnly: true,
          dropsWithoutLocalEndpoints: true,
          noBackendVerdict: 'drop',
          path: ['KUBE-NODEPORTS'],
        }),
      ],
    };
    const m = toMermaid(view, 'iptables-save');
    expect(m.startsWith('flowchart TB\n')).toBe(true);
    expect(m).toContain('KUBE-SEP-Y');
    expect(m).toContain('DNAT to pod<br/>10.244.1.2:8080');
    expect(m).toContain('dropped: no local<br/>endpoint on this node');
    expect(m).not.toMatch(/we"b/);
  });
  it('wraps labels at spaces, and long names after their dashes, slashes, underscores and colons', () => {
    expect(wrapLabel('statistic random: 33.3% (probability 0.33333333349)')).toEqual([
      'statistic random: 33.3%',
      '(probability',
      '0.33333333349)',
    ]);
    expect(wrapLabel('KUBE-SEP-PXJ2U7QYT2QW5545')).toEqual(['KUBE-SEP-', 'PXJ2U7QYT2QW5545']);
    expect(wrapLabel('endpoint-X665QFQS-default/web/tcp/__10.244.1.2/8080')).toEqual([
      'endpoint-X665QFQS-',
      'default/web/tcp/__',
      '10.244.1.2/8080',
    ]);
    expect(wrapLabel('x'.repeat(30), 12)).toEqual(['x'.repeat(12), 'x'.repeat(12), 'x'.repeat(6)]);
    expect(wrapLabel('short')).toEqual(['short']);
  });
  it("stacks a frontend's backends in one box and the frontends one under the other, no line longer than a phone allows", () => {
    const backends = [1, 2, 3].map((i) => ({
      ip: `10.244.${i}.2`,
      port: 8080,
      share: 1 / 3,
      via: `KUBE-SEP-PXJ2U7QYT2QW554${i}`,
      detail: 'probability 0.33333333349',
    }));
    const fe = (port: number) => frontend({ port, path: ['KUBE-SERVICES', 'KUBE-SVC-LOLE4ISW44XBNF3G'], backends });
    const m = toMermaid({ service: 'default/web', frontends: [fe(80), fe(443)] }, 'iptables-save');
    // The three backends under one another inside one box the choice leads to.
    expect(m).toMatch(/subgraph b\d+ \[" "\]\n\s+direction TB\n(?:.*\n)*?\s+n\d+ ~~~ n\d+\n(?:.*\n)*?\s+n\d+ ~~~ n\d+\n(?:.*\n)*?\s+end\n/);
    expect(m).toMatch(/ -- "statistic random:<br\/>one of 3 backends per<br\/>new connection" --> b\d+\n/);
    // No edge fans out to the backends: each node has one drawn edge out at most.
    const outs = [...m.matchAll(/^\s+(\w+) (?:--|-\.|-->)/gm)].map((x) => x[1]);
    expect(outs.length).toBe(new Set(outs).size);
    // The second frontend's box under the first.
    expect(m).toMatch(/^\s+f\d+ ~~~ f\d+$/m);
    const labels = [...m.matchAll(/"([^"]*)"/g)].flatMap((x) => x[1].split('<br/>'));
    for (const line of labels) expect(line.replace(/#\w+;/g, '_').length).toBeLessThanOrEqual(LABEL_LINE_CHARS);
  });
});

describe('commandsToRead', () => {
  it('gives the node command per format', () => {
    expect(commandsToRead('iptables-save')).toEqual(['iptables-save']);
    expect(commandsToRead('nft-json')).toEqual(['nft', '-j', 'list', 'table', 'ip', 'kube-proxy']);
    expect(commandsToRead('proc-ip-vs')).toEqual(['cat', '/proc/net/ip_vs']);
    expect(commandsToRead('cilium-json')).toEqual(['cilium-dbg', 'service', 'list', '-o', 'json']);
  });
});

describe('cilium names with a port name', () => {
  it('splits `ns/name:port` so a Service is found by `ns/name`', async () => {
    const { readFileSync } = await import('node:fs');
    const { parse, findService } = await import('./index.ts');
    const text = readFileSync(new URL('./fixtures/cilium/clusterip.txt', import.meta.url), 'utf8');
    const model = parse('cilium', text, { names: { '10.96.0.10:53': 'kube-system/kube-dns:dns' } });
    const view = findService(model, 'kube-system/kube-dns');
    expect(view).not.toBeNull();
    expect(view!.frontends.some((f) => f.portName === 'dns')).toBe(true);
  });
});
