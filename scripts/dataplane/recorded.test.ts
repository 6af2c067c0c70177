// Dataplane dumps recorded on real clusters of the kind test environment (README in fixtures/):
// what the pinned software prints, read by the same parsers as our written fixtures.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCiliumServiceJson, parseCiliumServiceList } from './cilium.ts';
import { parseIpvsadm, parseProcIpVs } from './ipvs.ts';
import type { DataplaneModel, ParseOptions } from './model.ts';

const fixture = (...p: string[]) => readFileSync(join(import.meta.dirname, 'fixtures', ...p), 'utf8');
const WEB = '10.99.20.7:80';
/** One recorded table as `ipvsadm -Ln` and `/proc/net/ip_vs` printed it (HZ 250 on the guest's kernel). */
const bothForms = (name: string, opts: ParseOptions) => ({
  list: parseIpvsadm(fixture('ipvsadm', `${name}.txt`), opts),
  proc: parseProcIpVs(fixture('proc-ip-vs', `${name}.txt`), { ...opts, hz: 250 }),
});

/** Every virtual server of a model as one sortable line: type, address, affinity, real servers. */
const frontends = (m: DataplaneModel) =>
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
  const { list, proc } = bothForms('recorded-qemu-linux-6.1', opts);

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

// Written by kube-proxy v1.35.0 itself, in IPVS mode on the same guest kernel (the sim provider in
// the QEMU guest, `dplab up ipvs`): ipvs-inspect's web with three pods, the same pods behind a
// NodePort and behind ClientIP affinity, the API server and kube-dns; read on the client's node
// (dplab-ipvs-worker, 172.31.2.3) after curls from the client pod (fixtures/README.md says how).
describe("ipvsadm -Ln and /proc/net/ip_vs as kube-proxy's IPVS mode programs them (recorded)", () => {
  const opts = { serviceCidr: '10.97.0.0/16', names: { '10.97.42.111:80': 'lab-ipvs-inspect/web' } };
  const { list, proc } = bothForms('recorded-kube-proxy-v1.35.0', opts);
  const PODS = ['10.245.0.2:8080', '10.245.2.2:8080', '10.245.2.3:8080'];

  it('one virtual server per ClusterIP and port, per node address for a NodePort, each with every endpoint as a Masq real server', () => {
    expect(frontends(list)).toEqual([
      'ClusterIP 10.97.0.10:53 → 172.31.2.2:53',
      'ClusterIP 10.97.0.10:53 → 172.31.2.2:53',
      'ClusterIP 10.97.0.10:9153 → 172.31.2.2:9153',
      'ClusterIP 10.97.0.1:443 → 172.31.2.2:6443',
      'ClusterIP 10.97.234.130:80 affinity 10800s → 10.245.0.2:8080,10.245.2.2:8080,10.245.2.3:8080',
      'ClusterIP 10.97.42.111:80 → 10.245.0.2:8080,10.245.2.2:8080,10.245.2.3:8080',
      'ClusterIP 10.97.6.235:80 → 10.245.0.2:8080,10.245.2.2:8080,10.245.2.3:8080',
      // kube-proxy binds a NodePort on every local address: the node's eth0 and the pods' gateway on their veths.
      'NodePort 10.245.0.1:30322 → 10.245.0.2:8080,10.245.2.2:8080,10.245.2.3:8080',
      'NodePort 172.31.2.3:30322 → 10.245.0.2:8080,10.245.2.2:8080,10.245.2.3:8080',
    ]);
    const web = list.services.find((s) => s.service === 'lab-ipvs-inspect/web');
    expect(web?.frontends[0].backends.map((b) => b.share.toFixed(3))).toEqual(['0.333', '0.333', '0.333']);
  });

  it('/proc/net/ip_vs says the same in hex, in hash order, affinity in jiffies (2700000 at HZ 250)', () => {
    expect(frontends(proc)).toEqual(frontends(list));
    expect(fixture('proc-ip-vs', 'recorded-kube-proxy-v1.35.0.txt')).toMatch(/^TCP {2}0A61EA82:0050 rr {2}persistent 2700000 FFFFFFFF$/m);
  });

  it("the kernel's counters and connections: three curls to web went one to each pod, the sticky Service's three to one", () => {
    const stats = fixture('ipvs-recorded', 'kube-proxy-stats.txt');
    const conns = (vs: string) => Number(new RegExp(`^TCP {2}${vs.replace(/\./g, '\\.')} +(\\d+)`, 'm').exec(stats)?.[1]);
    expect(conns('10.97.42.111:80')).toBe(3);
    expect(conns('10.97.234.130:80')).toBe(3);
    const table = fixture('ipvs-recorded', 'kube-proxy-connections.txt');
    const toWeb = [...table.matchAll(/^TCP \S+ +TIME_WAIT +10\.245\.0\.3:\d+ +10\.97\.42\.111:80 +(\S+)$/gm)].map((m) => m[1]);
    expect(toWeb.sort()).toEqual(PODS);
    const toSticky = new Set([...table.matchAll(/^TCP \S+ +\S+ +10\.245\.0\.3:\d+ +10\.97\.234\.130:80 +(\S+)$/gm)].map((m) => m[1]));
    expect([...toSticky]).toEqual(['10.245.2.3:8080']);
    // The persistence template: client port 0, ASSURED, expiring from 180 minutes (10800 s).
    expect(table).toMatch(/^TCP 179:\d\d ASSURED +10\.245\.0\.3:0 +10\.97\.234\.130:80 +10\.245\.2\.3:8080$/m);
  });
});
