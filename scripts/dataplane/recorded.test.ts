// Dataplane dumps recorded on real clusters of the kind test environment (README in fixtures/):
// what the pinned software prints, read by the same parsers as our written fixtures.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCiliumServiceJson, parseCiliumServiceList } from './cilium.ts';
import { parseIpvsadm, parseProcIpVs } from './ipvs.ts';

const fixture = (...p: string[]) => readFileSync(join(import.meta.dirname, 'fixtures', ...p), 'utf8');
const WEB = '10.99.20.7:80';

describe('cilium-dbg service list from Cilium 1.19.4 on kind (recorded)', () => {
  const text = fixture('cilium', 'recorded-kind-v1.19.4.txt');

  it('prints the ID column, rows in ID order, cells padded by its tabwriter', () => {
    const lines = text.split('\n');
    expect(lines[0].trim().split(/\s{2,}/)).toEqual(['ID', 'Frontend', 'Service Type', 'Backend']);
    expect(lines[1]).toMatch(/^1 {4}10\.99\.0\.1:443\/TCP {7}ClusterIP {6}1 => \S+:6443\/TCP \(active\) +$/);
  });

  it("reads web's ClusterIP with its three pods at a third each, and kube-dns's two", () => {
    const model = parseCiliumServiceList(text, { names: { [WEB]: 'lab-first-service/web' } });
    const web = model.services.find((s) => s.service === 'lab-first-service/web');
    expect(web?.frontends).toHaveLength(1);
    expect(web?.frontends[0]).toMatchObject({ type: 'ClusterIP', ip: '10.99.20.7', port: 80, protocol: 'TCP' });
    expect(web?.frontends[0].backends.map((b) => [b.ip, b.port, b.share.toFixed(3)])).toEqual([
      ['10.247.1.122', 8080, '0.333'],
      ['10.247.1.223', 8080, '0.333'],
      ['10.247.2.254', 8080, '0.333'],
    ]);
    const dns = model.services.flatMap((s) => s.frontends).filter((f) => f.ip === '10.99.0.10');
    expect(dns.map((f) => `${f.port}/${f.protocol}:${f.backends.length}`).sort()).toEqual(['53/TCP:2', '53/UDP:2', '9153/TCP:2']);
  });

  it('says the same in its JSON form, which names every Service', () => {
    const json = parseCiliumServiceJson(fixture('cilium-json', 'recorded-kind-v1.19.4.json'));
    const names = json.services.map((s) => s.service).sort();
    expect(names).toEqual(['default/kubernetes', 'kube-system/hubble-peer', 'kube-system/kube-dns', 'lab-first-service/web']);
    const web = json.services.find((s) => s.service === 'lab-first-service/web');
    expect(web?.frontends[0].backends.map((b) => b.ip).sort()).toEqual(['10.247.1.122', '10.247.1.223', '10.247.2.254']);
  });
});

// ip_vs of Debian 12's kernel (6.1.0-50-amd64) in the test environment's QEMU guest, set up with
// ipvsadm 1.31 as kube-proxy sets up a Service (fixtures/ipvs-recorded/setup.sh, traffic.sh):
// real output of a real ip_vs, though the virtual servers were not written by kube-proxy.
describe('ipvsadm -Ln and /proc/net/ip_vs from a real ip_vs kernel (recorded)', () => {
  const opts = { serviceCidr: ['10.97.0.0/16', 'fd00:10:97::/112'] };
  const list = parseIpvsadm(fixture('ipvsadm', 'recorded-qemu-linux-6.1.txt'), opts);
  const proc = parseProcIpVs(fixture('proc-ip-vs', 'recorded-qemu-linux-6.1.txt'), { ...opts, hz: 250 });
  const frontends = (m: typeof list) =>
    m.services
      .flatMap((s) => s.frontends)
      .map(
        (f) =>
          `${f.type} ${f.ip}:${f.port} ${f.affinity ? `affinity ${f.affinity.timeoutSeconds}s ` : ''}→ ${
            f.backends
              .map((b) => `${b.ip}:${b.port}`)
              .sort()
              .join(',') || 'none'
          }`,
      )
      .sort();

  it('reads both forms alike: IPv4 and IPv6 ClusterIPs, the persistent one, the one with no real servers', () => {
    expect(frontends(list)).toEqual([
      'ClusterIP 10.97.0.10:443 affinity 10800s → 10.245.1.2:8080',
      'ClusterIP 10.97.0.10:80 → 10.245.1.2:8080,10.245.2.2:8080',
      'ClusterIP 10.97.0.20:80 → none',
      'ClusterIP fd00:10:97::10:80 → fd00:245:1::2:8080,fd00:245:2::2:8080',
    ]);
    // The kernel prints persistence in jiffies (2700000 at HZ 250) and lists its hash order, not ipvsadm's sorted one.
    expect(frontends(proc)).toEqual(frontends(list));
    expect(fixture('proc-ip-vs', 'recorded-qemu-linux-6.1.txt')).toMatch(/^TCP {2}0A61000A:01BB rr {2}persistent 2700000 FFFFFFFF$/m);
  });

  it('leaves the firewall-mark virtual server out, saying why', () => {
    for (const m of [list, proc]) expect((m.notes ?? []).join('\n')).toMatch(/1 firewall-mark \(FWM\) virtual server left out/);
  });
});
