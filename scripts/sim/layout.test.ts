import { describe, expect, it } from 'vitest';
import { MODE_INFO } from '../catalogue/modes.ts';
import { dnsManifests, kubeProxyConfig } from './cluster.ts';
import { kernelHasIpvs, simLayout } from './layout.ts';
import { parse } from 'yaml';

describe('sim layout', () => {
  it('names nodes like kind and gives each mode its own node /24, away from 192.0.2.0/24', () => {
    const a = simLayout('iptables');
    const b = simLayout('nftables');
    expect(a.nodes.map((n) => n.name)).toEqual(['dplab-iptables-control-plane', 'dplab-iptables-worker', 'dplab-iptables-worker2']);
    expect(a.nodeSubnet).not.toBe(b.nodeSubnet);
    expect(a.bridge).not.toBe(b.bridge);
    for (const l of [a, b]) {
      expect(l.nodeSubnet.startsWith('192.0.2.')).toBe(false);
      expect(l.bridge.length).toBeLessThanOrEqual(15);
      for (const n of l.nodes) expect(n.hostVeth.length).toBeLessThanOrEqual(15);
    }
  });

  it("takes pod and Service subnets from the mode's kind config, kube-dns at the tenth Service address", () => {
    const l = simLayout('nftables');
    expect(l.podSubnet).toBe(MODE_INFO.nftables.podSubnet);
    expect(l.serviceSubnet).toBe(MODE_INFO.nftables.serviceSubnet);
    expect(l.dnsIp).toBe('10.98.0.10');
  });

  it('refuses cilium, and ipvs on a kernel without ip_vs, each with the reason', () => {
    expect(() => simLayout('cilium')).toThrow(/runs the iptables and nftables modes \(and IPVS on a kernel with ip_vs\), not cilium/);
    if (kernelHasIpvs()) expect(simLayout('ipvs').mode).toBe('ipvs');
    else expect(() => simLayout('ipvs')).toThrow(/IPVS only on a kernel with ip_vs, and this one has none/);
  });

  it("writes kind's kube-proxy settings", () => {
    const cfg = parse(kubeProxyConfig(simLayout('iptables'), '/k')) as Record<string, unknown>;
    expect(cfg).toMatchObject({
      kind: 'KubeProxyConfiguration',
      mode: 'iptables',
      clusterCIDR: '10.244.0.0/16',
      conntrack: { maxPerCore: 0 },
      iptables: { minSyncPeriod: '1s' },
      clientConnection: { kubeconfig: '/k' },
    });
  });

  it('puts kube-dns at the cluster DNS address with an EndpointSlice naming the control-plane node', () => {
    const l = simLayout('iptables');
    const items = (
      JSON.parse(dnsManifests(l)) as { items: { kind: string; spec?: { clusterIP?: string }; endpoints?: { addresses: string[] }[] }[] }
    ).items;
    expect(items.find((i) => i.kind === 'Service')?.spec?.clusterIP).toBe('10.96.0.10');
    expect(items.find((i) => i.kind === 'EndpointSlice')?.endpoints?.[0].addresses).toEqual([l.nodes[0].ip]);
  });
});
