// Regression tests on kube-proxy's own output (fixtures/README.md "Upstream fixtures"): what the
// parsers make of the rules kube-proxy v1.35.0 writes in its unit tests, against the Services those
// tests declare. No writer of ours is involved.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findService, parse, type Format } from './index.ts';

const DIR = join(import.meta.dirname, 'fixtures');
const read = (p: string) => readFileSync(join(DIR, p), 'utf8');

/** TestOverallIPTablesRules / TestOverallNFTablesRules declare the same six Services. */
const OVERALL: Array<[Format, string]> = [
  ['iptables-save', 'iptables-save/upstream-v1.35-overall.txt'],
  ['nft-json', 'nft-json/upstream-v1.35-overall.json'],
];

type Row = [type: string, address: string, backends: string, localOnly: boolean, drops: boolean, verdict: string | null];

function rows(format: Format, file: string, service: string): Row[] {
  const view = findService(parse(format, read(file)), service);
  return (view?.frontends ?? []).map((f) => [
    f.type,
    `${f.ip}:${f.port}`,
    f.backends.map((b) => `${b.ip}:${b.port}@${b.share.toFixed(2)}`).join(','),
    f.localOnly,
    f.dropsWithoutLocalEndpoints,
    f.noBackendVerdict,
  ]);
}

describe.each(OVERALL)('kube-proxy v1.35.0 overall rules, %s', (format, file) => {
  it('ns1/svc1: a ClusterIP with one endpoint', () => {
    expect(rows(format, file, 'ns1/svc1')).toEqual([['ClusterIP', '172.30.0.41:80', '10.180.0.1:80@1.00', false, false, null]]);
  });

  it('ns2/svc2: LoadBalancer + external IP with externalTrafficPolicy Local and no local endpoint: one frontend per address, all dropping', () => {
    // iptables names the load-balancer IP in its comment; nft sends both addresses to the same
    // external- chain and has nothing that tells them apart (no source ranges here).
    const lbType = format === 'iptables-save' ? 'LoadBalancer' : 'ExternalIP';
    const got = rows(format, file, 'ns2/svc2');
    expect(got).toEqual(
      expect.arrayContaining([
        ['ClusterIP', '172.30.0.42:80', '10.180.0.2:80@1.00', false, false, null],
        ['ExternalIP', '192.168.99.22:80', '', true, true, 'drop'],
        [lbType, '1.2.3.4:80', '', true, true, 'drop'],
        ['NodePort', '0.0.0.0:3001', '', true, true, 'drop'],
      ]),
    );
    // The "has no local endpoints" DROP for 1.2.3.4 is the LoadBalancer frontend's, not a second one.
    expect(got.filter((r) => r[1] === '1.2.3.4:80')).toHaveLength(1);
    expect(got).toHaveLength(4);
  });

  it('ns3/svc3: NodePort 3003 and its ClusterIP', () => {
    expect(rows(format, file, 'ns3/svc3')).toEqual([
      ['ClusterIP', '172.30.0.43:80', '10.180.0.3:80@1.00', false, false, null],
      ['NodePort', '0.0.0.0:3003', '10.180.0.3:80@1.00', false, false, null],
    ]);
  });

  it('ns4/svc4: external IP 192.168.99.33 over two endpoints, half each', () => {
    const both = '10.180.0.4:80@0.50,10.180.0.5:80@0.50';
    expect(rows(format, file, 'ns4/svc4')).toEqual([
      ['ClusterIP', '172.30.0.44:80', both, false, false, null],
      ['ExternalIP', '192.168.99.33:80', both, false, false, null],
    ]);
  });

  it('ns5/svc5: LoadBalancer with loadBalancerSourceRanges and ClientIP affinity', () => {
    const view = findService(parse(format, read(file)), 'ns5/svc5');
    const lb = view?.frontends.find((f) => f.type === 'LoadBalancer');
    expect(lb).toMatchObject({ ip: '5.6.7.8', port: 80, sourceRanges: ['203.0.113.0/25'], affinity: { timeoutSeconds: 10800 } });
    expect(lb?.backends.map((b) => b.ip)).toEqual(['10.180.0.3']);
    // The other sources are dropped in the filter path kube-proxy writes for this purpose.
    expect(lb?.path.join(' ')).toMatch(format === 'iptables-save' ? /KUBE-FW-.*KUBE-PROXY-FIREWALL \(filter\)/ : /@firewall-ips firewall-/);
    expect(view?.frontends.map((f) => f.type).sort()).toEqual(['ClusterIP', 'LoadBalancer', 'NodePort']);
  });

  it('ns6/svc6: no endpoints at all is a reject', () => {
    expect(rows(format, file, 'ns6/svc6')).toEqual([['ClusterIP', '172.30.0.46:80', '', false, false, 'reject']]);
  });

  it('nothing but the six Services', () => {
    expect(parse(format, read(file)).services.map((s) => s.service)).toEqual([
      'ns1/svc1',
      'ns2/svc2',
      'ns3/svc3',
      'ns4/svc4',
      'ns5/svc5',
      'ns6/svc6',
    ]);
  });
});

describe('iptables-save: rules kube-proxy ≥ 1.29 writes with nfacct', () => {
  it('the 127.0.0.0/8 NodePort rule with its nfacct counter is the same NodePort, not a second frontend', () => {
    const view = findService(parse('iptables-save', read('iptables-save/upstream-v1.35-overall.txt')), 'ns3/svc3');
    expect(view?.frontends.filter((f) => f.type === 'NodePort')).toHaveLength(1);
  });
});

const GENERATED: Array<[Format, string]> = [
  ['iptables-save', 'iptables-save/upstream-v1.35-%s.txt'],
  ['nft-json', 'nft-json/upstream-v1.35-%s.json'],
];

describe.each(GENERATED)('kube-proxy v1.35.0 %s: shapes its tests check only as packet flows (upstream-gen)', (format, pattern) => {
  const model = (name: string) => parse(format, read(pattern.replace('%s', name)));
  const view = (name: string, service: string) =>
    (findService(model(name), service)?.frontends ?? []).map((f) => [
      f.type,
      f.backends.map((b) => b.ip).join(','),
      f.localOnly,
      f.dropsWithoutLocalEndpoints,
      f.noBackendVerdict,
    ]);

  it('internalTrafficPolicy Local: the ClusterIP goes straight to the local policy chain, with the local endpoint only', () => {
    expect(view('internal-traffic-policy', 'ns1/itp-local')).toEqual([['ClusterIP', '10.0.1.1', true, false, null]]);
    expect(findService(model('internal-traffic-policy'), 'ns1/itp-local')?.frontends[0].path.at(-1)).toMatch(
      format === 'iptables-save' ? /^KUBE-SVL-/ : /^local-/,
    );
  });

  it('internalTrafficPolicy Local without a local endpoint: the ClusterIP is dropped', () => {
    expect(view('internal-traffic-policy', 'ns1/itp-none')).toEqual([['ClusterIP', '', true, true, 'drop']]);
  });

  it('terminating endpoints: ready ones win; with Local policy and only terminating local ones, those serve outside traffic', () => {
    expect(view('terminating', 'ns2/term-some')).toEqual([
      ['ClusterIP', '10.0.2.1,10.0.2.3', false, false, null],
      ['NodePort', '10.0.2.1', true, false, null],
    ]);
    expect(view('terminating', 'ns2/term-all')).toEqual([
      ['ClusterIP', '10.0.2.6', false, false, null],
      ['NodePort', '10.0.2.4,10.0.2.5', true, false, null],
    ]);
    expect(view('terminating', 'ns2/term-cluster')).toEqual([['ClusterIP', '10.0.2.7', false, false, null]]);
  });
});

describe('kube-proxy v1.35.0 iptables large cluster mode (upstream-gen)', () => {
  const model = (name: string) => parse('iptables-save', read(`iptables-save/upstream-v1.35-${name}.txt`));

  it('large cluster mode (over 1000 endpoints): rules without per-endpoint comments still give every backend its share', () => {
    const big = findService(model('large-cluster-mode'), 'ns3/big')?.frontends[0];
    expect(big?.backends).toHaveLength(1000);
    const sum = big?.backends.reduce((n, b) => n + b.share, 0) ?? 0;
    expect(sum).toBeCloseTo(1, 9);
    for (const b of big?.backends ?? []) expect(b.share).toBeCloseTo(0.001, 6);
    // The dump really is large-cluster mode: no endpoint chain carries a comment.
    expect(read('iptables-save/upstream-v1.35-large-cluster-mode.txt')).not.toMatch(/^-A KUBE-SEP-\S+ -m comment/m);
    expect(findService(model('large-cluster-mode'), 'ns3/small')?.frontends[0].backends.map((b) => b.ip)).toEqual(['10.4.0.1', '10.4.0.2']);
  });
});
