// IPVS shapes the scenario grid lacks: dual-stack nodes (IPv6 virtual servers), firewall-mark
// virtual servers, lines the parser does not know, and clusters whose Service CIDR is not
// kubeadm's default. /proc lines follow the kernel's printf formats (net/netfilter/ipvs/ip_vs_ctl.c,
// ip_vs_info_seq_show: "%s  [%pI6]:%04X %s ", "FWM  %08X %s %s"); see fixtures/README.md.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findFrontend, parse, toText } from './index.ts';

const DUAL = readFileSync(join(import.meta.dirname, 'fixtures', 'proc-ip-vs', 'dual-stack-fwm.txt'), 'utf8');
const CIDRS = ['10.96.0.0/16', 'fd00:10:96::/112'];

const kinds = (text: string, opts = {}, format: 'proc-ip-vs' | 'ipvsadm' = 'proc-ip-vs') =>
  parse(format, text, opts).services.flatMap((s) => s.frontends.map((f) => `${f.type} ${f.ip}:${f.port} ×${f.backends.length}`));

describe('/proc/net/ip_vs on a dual-stack node', () => {
  it('reads IPv6 virtual servers and real servers in the kernel full form, next to the IPv4 ones', () => {
    expect(kinds(DUAL, { serviceCidr: CIDRS })).toEqual([
      'ClusterIP 10.96.0.1:443 ×1',
      'ClusterIP 10.96.45.112:80 ×3',
      'ClusterIP fd00:10:96::1:443 ×1',
      'ClusterIP fd00:10:96::2d70:80 ×3',
      'NodePort 172.18.0.3:30080 ×3',
    ]);
    const v6 = findFrontend(parse('proc-ip-vs', DUAL, { serviceCidr: CIDRS }), '[fd00:10:96::1]:443');
    expect(v6?.frontends[0].backends).toMatchObject([{ ip: 'fc00:f853:ccd:e793::2', port: 6443, share: 1 }]);
  });

  it('leaves the FWM virtual server and its real servers out, and says so', () => {
    const model = parse('proc-ip-vs', DUAL, { serviceCidr: CIDRS });
    // The FWM real servers (172.27.0.30/31) must not be attached to the virtual server above them.
    expect(model.services.flatMap((s) => s.frontends.flatMap((f) => f.backends.map((b) => b.ip)))).not.toContain('172.27.0.31');
    expect(model.notes).toEqual([expect.stringMatching(/^1 firewall-mark \(FWM\) virtual server left out/)]);
    expect(model.counts.firewallMarks).toBe(1);
  });

  it('one line it cannot read is a note; every other virtual server is still there', () => {
    const broken = DUAL.replace('TCP  0A602D70:0050 rr ', 'TCP  0A602D70:0050 ??? ');
    const model = parse('proc-ip-vs', broken, { serviceCidr: CIDRS });
    expect(kinds(broken, { serviceCidr: CIDRS })).toEqual([
      'ClusterIP 10.96.0.1:443 ×1',
      'ClusterIP fd00:10:96::1:443 ×1',
      'ClusterIP fd00:10:96::2d70:80 ×3',
      'NodePort 172.18.0.3:30080 ×3',
    ]);
    expect(model.notes?.[0]).toMatch(
      /^line 8: virtual server line not understood, left out with its real servers: TCP {2}0A602D70:0050 \?\?\?/,
    );
    expect(toText(findFrontend(model, '172.18.0.3:30080')!, model)).toContain('note: line 8: virtual server line not understood');
  });
});

describe('ipvsadm -Ln with IPv6 and FWM', () => {
  // ipvsadm prints IPv6 in brackets and a firewall mark as "FWM  <n> <scheduler>".
  const TEXT = [
    'IP Virtual Server version 1.2.1 (size=4096)',
    'Prot LocalAddress:Port Scheduler Flags',
    '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
    'TCP  [fd00:10:96::1]:443 rr',
    '  -> [fc00:f853:ccd:e793::2]:6443 Masq    1      0          0',
    'FWM  1 wrr',
    '  -> 172.27.0.30:80               Masq    1      0          0',
    '  -> 172.27.0.31:80               Masq    1      0          0',
    'TCP  10.96.0.1:443 rr',
    '  -> 172.18.0.2:6443              Masq    1      0          0',
    '',
  ].join('\n');

  it('reads both families and skips the firewall mark with a note', () => {
    const model = parse('ipvsadm', TEXT, { serviceCidr: CIDRS });
    expect(kinds(TEXT, { serviceCidr: CIDRS }, 'ipvsadm')).toEqual(['ClusterIP 10.96.0.1:443 ×1', 'ClusterIP fd00:10:96::1:443 ×1']);
    expect(model.notes).toHaveLength(1);
  });
});

describe('which virtual servers are ClusterIPs', () => {
  // A cluster whose Service CIDR is 10.200.0.0/16 (kind's `serviceSubnet` set so): outside kubeadm's 10.96.0.0/12.
  const OTHER = [
    'IP Virtual Server version 1.2.1 (size=4096)',
    'Prot LocalAddress:Port Scheduler Flags',
    '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
    'TCP  10.200.0.1:443 rr',
    '  -> 172.18.0.2:6443              Masq    1      0          0',
    'TCP  172.18.0.3:30080 rr',
    '  -> 10.244.1.2:8080              Masq    1      0          0',
    '',
  ].join('\n');

  it('without a CIDR or ClusterIPs the type is a guess, and the model says so', () => {
    const model = parse('ipvsadm', OTHER);
    expect(kinds(OTHER, {}, 'ipvsadm')).toEqual(['ExternalIP 10.200.0.1:443 ×1', 'NodePort 172.18.0.3:30080 ×1']);
    expect(model.notes).toEqual([expect.stringContaining('Service CIDR unknown')]);
  });

  it('the Service CIDR (the --service-cidr flag) decides', () => {
    const model = parse('ipvsadm', OTHER, { serviceCidr: '10.200.0.0/16' });
    expect(kinds(OTHER, { serviceCidr: '10.200.0.0/16' }, 'ipvsadm')[0]).toBe('ClusterIP 10.200.0.1:443 ×1');
    expect(model.notes).toBeUndefined();
  });

  it("the cluster's ClusterIPs (live reads) decide, even outside the CIDR given", () => {
    expect(kinds(OTHER, { clusterIPs: ['10.200.0.1'], serviceCidr: '10.96.0.0/16' }, 'ipvsadm')[0]).toBe('ClusterIP 10.200.0.1:443 ×1');
  });
});

describe('the explorer response carries the notes', () => {
  it('an IPVS read without a Service CIDR says so in `notes` and in the text', async () => {
    const { explainView } = await import('./explain-view.ts');
    const model = parse('proc-ip-vs', DUAL, { names: { 'TCP/10.96.45.112:80': 'default/web' } });
    const r = explainView(model, 'default/web', { source: 'fixture' });
    expect(r?.notes).toEqual(
      expect.arrayContaining([expect.stringContaining('Service CIDR unknown'), expect.stringContaining('firewall-mark')]),
    );
    expect(r?.text).toContain('note: Service CIDR unknown');
  });
});

/**
 * The format strings of ip_vs_info_seq_show (Linux net/netfilter/ipvs/ip_vs_ctl.c), as regular
 * expressions: a virtual server is "%s  %08X:%04X %s %s " (IPv4: scheduler, the "ops " flag or
 * nothing, a space), "%s  [%pI6]:%04X %s " (IPv6, full lower-case groups) or "FWM  %08X %s %s",
 * then "persistent %d %08X" or nothing; a real server "  -> %08X:%04X      %-7s %-6d %-10d %-10d"
 * (IPv6: "  -> [%pI6]:%04X      …"). The firewall-mark table is printed after the address table.
 */
const KERNEL_LINE = {
  v4: /^(TCP|UDP|SCTP) {2}[0-9A-F]{8}:[0-9A-F]{4} [a-z]+ (ops )? (persistent \d+ [0-9A-F]{8})?$/,
  v6: /^(TCP|UDP|SCTP) {2}\[([0-9a-f]{4}:){7}[0-9a-f]{4}\]:[0-9A-F]{4} [a-z]+ (persistent \d+ [0-9A-F]{8})?$/,
  fwm: /^FWM {2}[0-9A-F]{8} [a-z]+ (ops )?(persistent \d+ [0-9A-F]{8})?$/,
  real: /^ {2}-> (?:[0-9A-F]{8}|\[(?:[0-9a-f]{4}:){7}[0-9a-f]{4}\]):[0-9A-F]{4} {6}(.{7}) (.{6}) (.{10}) (.{10})$/,
};
const KERNEL_HEADER = [
  /^IP Virtual Server version \d+\.\d+\.\d+ \(size=\d+\)$/,
  /^Prot LocalAddress:Port Scheduler Flags$/,
  /^ {2}-> RemoteAddress:Port Forward Weight ActiveConn InActConn$/,
];

describe('every /proc/net/ip_vs fixture has the shape the kernel prints', () => {
  const dir = join(import.meta.dirname, 'fixtures', 'proc-ip-vs');
  const files = readdirSync(dir).filter((f) => f.endsWith('.txt'));

  it('there are fixtures, the dual-stack one among them', () => expect(files).toContain('dual-stack-fwm.txt'));

  it.each(files)('%s', (file) => {
    const lines = readFileSync(join(dir, file), 'utf8').replace(/\n$/, '').split('\n');
    KERNEL_HEADER.forEach((re, i) => expect(lines[i]).toMatch(re));
    let seenFwm = false;
    for (const line of lines.slice(3)) {
      const real = KERNEL_LINE.real.exec(line);
      if (real) {
        // %-7s %-6d %-10d %-10d: left-aligned in their widths.
        const [forward, weight, active, inactive] = real.slice(1);
        expect(forward.trimEnd()).toMatch(/^(Masq|Local|Tunnel|Route|Bypass)$/);
        for (const n of [weight, active, inactive]) expect(n.trimEnd()).toMatch(/^\d+$/);
        continue;
      }
      const kind = (['v4', 'v6', 'fwm'] as const).find((k) => KERNEL_LINE[k].test(line));
      expect(kind, `not a line ip_vs_info_seq_show prints: ${JSON.stringify(line)}`).toBeDefined();
      if (kind === 'fwm') seenFwm = true;
      else expect(seenFwm, `an address virtual server after the firewall-mark ones: ${line}`).toBe(false);
    }
  });
});
