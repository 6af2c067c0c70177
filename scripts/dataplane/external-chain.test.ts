// A NodePort's external chain (kube-proxy's KUBE-EXT-<hash> / external-<hash>-…) as the model,
// the diagram and the text show it: with externalTrafficPolicy Cluster one rule marks every packet
// for masquerading; with Local, pod and node traffic is sent to the Cluster chain first and only
// the rest (clients outside) to the local chain, which a node without a local endpoint lacks, so
// there the filter rules drop. Rule shapes from pkg/proxy/{iptables,nftables}/proxier.go v1.35.0,
// as the written fixtures carry them (and as the sim's real kube-proxy printed them in etp-local's
// recordings).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixtureFile } from './fixture-catalog.ts';
import { findService, parse, toMermaid, toText, type Format } from './index.ts';
import type { Frontend } from './model.ts';

/** `text` as the diagram may break it into lines (at its spaces). */
const drawn = (text: string) => new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '(?: |<br/>)'));

const load = (format: Format, id: string) => parse(format, readFileSync(fixtureFile(format, id), 'utf8'));

function nodePort(format: Format, fixture: string): Frontend & { portName: string | null } {
  const view = findService(load(format, fixture), 'default/web');
  const np = view?.frontends.find((f) => f.type === 'NodePort');
  if (!np) throw new Error(`no NodePort of default/web in ${format}/${fixture}`);
  return np;
}

const CASES = [
  {
    format: 'iptables-save' as const,
    ext: /^KUBE-EXT-/,
    cluster: /^KUBE-SVC-/,
    local: /^KUBE-SVL-/,
    mark: 'KUBE-MARK-MASQ',
    pods: '-s 10.244.0.0/16',
    node: '--src-type LOCAL',
    filter: 'KUBE-EXTERNAL-SERVICES (filter)',
  },
  {
    format: 'nft-json' as const,
    ext: /^external-/,
    cluster: /^service-/,
    local: /^local-/,
    mark: 'mark-for-masquerade',
    pods: 'ip saddr 10.244.0.0/16',
    node: 'fib saddr type local',
    filter: '@no-endpoint-nodeports (filter)',
  },
];

describe.each(CASES)('$format: the external chain of a NodePort', (c) => {
  it('Cluster: one rule marks every packet, then the Cluster chain', () => {
    const np = nodePort(c.format, 'nodeport');
    expect(np.external?.chain).toMatch(c.ext);
    expect(np.path.at(-1)).toMatch(c.cluster);
    expect(np.external?.rules.map((r) => [r.traffic, r.action, r.target])).toEqual([['all', 'masquerade', c.mark]]);
  });

  it('Local with local endpoints: pods and the node itself to the Cluster chain, the rest to the local chain', () => {
    const np = nodePort(c.format, 'etp-local-with-endpoints');
    expect(np.path.at(-1)).toMatch(c.local);
    const rules = np.external?.rules ?? [];
    expect(rules.map((r) => [r.traffic, r.action, r.match])).toEqual([
      ['pods', 'jump', c.pods],
      ['node', 'masquerade', c.node],
      ['node', 'jump', c.node],
    ]);
    expect(rules[0].target).toMatch(c.cluster);
    expect(rules[1].target).toBe(c.mark);
    expect(rules[0].comment).toMatch(
      c.format === 'iptables-save' ? /^pod traffic for default\/web external destinations$/ : /short-circuit pod traffic/,
    );
  });

  it('Local without a local endpoint: the same short-circuits, no last jump, the drop in the filter rules', () => {
    const np = nodePort(c.format, 'etp-local-without-endpoints');
    expect(np.external?.rules.map((r) => r.traffic)).toEqual(['pods', 'node', 'node']);
    expect(np.path.some((h) => c.local.test(h))).toBe(false);
    expect(np.path.at(-2)).toMatch(c.ext);
    expect(np.path.at(-1)).toBe(c.filter);
    expect(np).toMatchObject({ backends: [], dropsWithoutLocalEndpoints: true, noBackendVerdict: 'drop' });
  });

  it('the diagram draws the side rules under the chain, dotted, in order, and labels who goes on', () => {
    const np = nodePort(c.format, 'etp-local-without-endpoints');
    const m = toMermaid({ service: 'default/web', frontends: [np] }, c.format);
    expect(m).toMatch(/ -\. "its rules, in order" \.-> n\d+\n/);
    expect(m).toMatch(drawn(`from a pod (${c.pods}):`));
    expect(m).toMatch(drawn(`sent by this node (${c.node}):`));
    expect(m).toMatch(drawn(`${c.mark}: marked for SNAT on the way out`));
    // The rules one after the other, dotted; from the last, the rest goes on to the filter chain's drop.
    expect(m.match(/ n\d+ -\.-> n\d+\n/g)).toHaveLength(2);
    expect(m).toMatch(
      new RegExp(
        `(n\\d+)\\["[^"]*\\(filter\\)"\\]\\n\\s+n\\d+ -- "${drawn('every other source: clients outside the cluster').source}" --> \\1\\n`,
      ),
    );
    expect(m).toMatch(drawn('dropped: no local endpoint on this node'));
    const cluster = toMermaid({ service: 'default/web', frontends: [nodePort(c.format, 'nodeport')] }, c.format);
    expect(cluster).toMatch(drawn('every packet:'));
    expect(cluster).not.toMatch(drawn('every other source'));
  });

  it('the text lists the rules before the last jump', () => {
    const model = load(c.format, 'etp-local-with-endpoints');
    const text = toText(findService(model, 'default/web')!, model);
    expect(text).toMatch(new RegExp(`\\n  ${c.ext.source.slice(1)}\\S+, before its last jump:`));
    expect(text).toContain(`from a pod (${c.pods}): to `);
    expect(text).toContain(`sent by this node (${c.node}): mark for masquerade`);
  });
});

describe('frontends without an external chain', () => {
  it('ClusterIPs and Cilium frontends have none; Cilium refuses where no local backend is left', () => {
    expect(findService(load('iptables-save', 'nodeport'), 'default/web')?.frontends.find((f) => f.type === 'ClusterIP')?.external).toBe(
      undefined,
    );
    const view = findService(load('cilium-json', 'etp-local-without-endpoints'), 'default/web')!;
    expect(view.frontends.every((f) => f.external === undefined)).toBe(true);
    expect(toMermaid(view, 'cilium-json')).toMatch(drawn("refused: no local backend on this node (Cilium's default reply)"));
    const model = load('cilium-json', 'etp-local-without-endpoints');
    expect(toText(findService(model, 'default/web')!, model)).toContain('REFUSES here: no local backend');
  });
});
