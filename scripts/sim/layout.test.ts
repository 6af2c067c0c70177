import { describe, expect, it } from 'vitest';
import { MODE_INFO } from '../catalogue/modes.ts';
import { dnsManifests } from './cluster.ts';
import { kubeProxyAddon, kubeProxyConfig } from './kube-proxy-addon.ts';
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

  it("writes kind's kube-proxy settings in kubeadm's ConfigMap, with the scheduler line the IPVS lab edits", () => {
    const text = kubeProxyConfig(simLayout('iptables'));
    expect(parse(text)).toMatchObject({
      kind: 'KubeProxyConfiguration',
      mode: 'iptables',
      clusterCIDR: '10.244.0.0/16',
      conntrack: { maxPerCore: 0 },
      iptables: { minSyncPeriod: '1s' },
      ipvs: { scheduler: '' },
      clientConnection: { kubeconfig: '/var/lib/kube-proxy/kubeconfig.conf' },
    });
    // ipvs-inspect's switch-to-lc: sed -E 's/^( +scheduler:).*/\1 lc/' on this text.
    expect(text.match(/^ +scheduler:.*$/gm)).toEqual(['  scheduler: ""']);
  });

  it("installs kube-proxy as kubeadm's DaemonSet reading that ConfigMap, with the sim's client certificate", () => {
    const creds = { server: 'https://10.0.0.2:6443', caFile: '/p/ca.crt', certFile: '/p/kp.crt', keyFile: '/p/kp.key' };
    const { items } = JSON.parse(kubeProxyAddon(simLayout('nftables'), creds, 'v1.35.0')) as {
      items: { kind: string; data?: Record<string, string>; spec?: { template: { spec: Record<string, unknown> } } }[];
    };
    expect(items.map((i) => i.kind)).toEqual(['ConfigMap', 'ServiceAccount', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'DaemonSet']);
    const kc = parse(items[0].data!['kubeconfig.conf']) as { users: { user: Record<string, string> }[] };
    expect(kc.users[0].user).toEqual({ 'client-certificate': '/p/kp.crt', 'client-key': '/p/kp.key' });
    expect(items[5].spec?.template.spec).toMatchObject({
      hostNetwork: true,
      serviceAccountName: 'kube-proxy',
      containers: [
        {
          image: 'registry.k8s.io/kube-proxy:v1.35.0',
          command: ['/usr/local/bin/kube-proxy', '--config=/var/lib/kube-proxy/config.conf', '--hostname-override=$(NODE_NAME)'],
        },
      ],
      volumes: [{ name: 'kube-proxy', configMap: { name: 'kube-proxy' } }, expect.anything(), expect.anything()],
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
