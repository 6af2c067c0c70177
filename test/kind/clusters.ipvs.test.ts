/**
 * kube-proxy's IPVS mode, run for real: the product's own CLI brings up a sim cluster (the real
 * control plane, kube-proxy v1.35.0 in IPVS mode, CoreDNS and agnhost on network-namespace
 * nodes) inside the QEMU guest, whose kernel has ip_vs (test/kind/guest-sim.ts). Every node must
 * say `ipvs` on /proxyMode and carry what kube-proxy's IPVS mode makes: the kube-ipvs0 dummy
 * holding the Service IPs, its ipsets, the KUBE-IPVS-FILTER rules, virtual servers with real
 * servers in /proc/net/ip_vs, which Debian's ipvsadm reads. Then every IPVS lab's author contract
 * runs (`verify-labs --mode ipvs`; kube-proxy is kubeadm's DaemonSet, so ipvs-inspect's scheduler
 * switch runs as on kind), and `down` leaves nothing.
 */
import { describe, expect, it } from 'vitest';
import { clusterName } from '../../scripts/catalogue/modes.ts';
import { CommandError } from '../../scripts/base/exec.ts';
import { inGuest } from './guest.ts';
import { guestDplab } from './guest-sim.ts';

const NAME = clusterName('ipvs');
const NODES = [`${NAME}-control-plane`, `${NAME}-worker`, `${NAME}-worker2`];
const inNode = async (node: string, cmd: string) =>
  (await inGuest(['ip', 'netns', 'exec', node, 'sh', '-c', cmd], { timeoutMs: 120_000 })).stdout;

describe('kube-proxy in IPVS mode on a kernel with ip_vs (the sim provider in the QEMU guest)', () => {
  it('up, what IPVS mode makes on every node, every IPVS lab contract, down', async () => {
    // A cluster left by an earlier run (or by a guest stopped under it) goes first: its state
    // folder survives the guest's restart while its processes do not.
    await guestDplab(['down', 'ipvs'], { timeoutMs: 10 * 60_000 });
    try {
      const up = await guestDplab(['up', 'ipvs'], { timeoutMs: 30 * 60_000 });
      expect(up.stdout + up.stderr).toMatch(/ready: 3\/3 nodes Ready/);
      for (const node of NODES) {
        expect(await inNode(node, 'curl -s http://127.0.0.1:10249/proxyMode'), node).toBe('ipvs');
        expect(await inNode(node, 'ipvsadm -Ln'), `${node}: ipvsadm reads the table`).toMatch(/^UDP {2}10\.97\.0\.10:53 rr\b/m);
        expect(await inNode(node, 'ip -4 addr show dev kube-ipvs0'), `${node}: kube-dns on kube-ipvs0`).toMatch(/inet 10\.97\.0\.10\/32/);
        expect(await inNode(node, 'ipset list -n'), `${node}: kube-proxy's ipsets`).toMatch(/^KUBE-CLUSTER-IP$/m);
        expect(await inNode(node, 'iptables-save -t filter'), `${node}: the IPVS filter chain`).toMatch(/^-A KUBE-IPVS-FILTER /m);
        // kube-dns' UDP 53 (0A61000A:0035) with CoreDNS behind it.
        expect(await inNode(node, 'cat /proc/net/ip_vs'), `${node}: virtual servers`).toMatch(
          /^UDP {2}0A61000A:0035 rr\s*\n {2}-> [0-9A-F]{8}:0035 +Masq/m,
        );
      }
      // verify-labs exits 1 on any breach; its table and the breaches are on stdout either way.
      const contract = await guestDplab(['verify-labs', '--mode', 'ipvs'], { timeoutMs: 150 * 60_000 }).catch((err: unknown) => {
        if (err instanceof CommandError && err.exitCode === 1) return err;
        throw err;
      });
      console.log(contract.stdout);
      const breaches = [...contract.stdout.matchAll(/^✗ (\S+) \/ ipvs \/ (\S+):/gm)].map((m) => `${m[1]} / ${m[2]}`);
      expect(breaches).toEqual([]);
    } finally {
      await guestDplab(['down', 'ipvs'], { timeoutMs: 10 * 60_000 });
    }
    expect(await inGuest(['ip', 'netns', 'list'], { timeoutMs: 60_000 }).then((r) => r.stdout)).not.toContain(NAME);
  });
});
