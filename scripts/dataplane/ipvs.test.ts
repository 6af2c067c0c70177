// IPVS shapes the scenario grid lacks: dual-stack nodes (IPv6 virtual servers), firewall-mark
// virtual servers, lines the parser does not know, and clusters whose Service CIDR is not
// kubeadm's default. /proc lines follow the kernel's printf formats (net/netfilter/ipvs/ip_vs_ctl.c,
// ip_vs_info_seq_show: "%s  [%pI6]:%04X %s ", "FWM  %08X %s %s"); see fixtures/README.md.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandContext } from '../commands/command.ts';
import { explain } from '../commands/explain.ts';
import { findFrontend, parse, toJson, toMermaid, toText } from './index.ts';

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

  it('without a CIDR or ClusterIPs an address outside the guessed range is of unknown type, and the note says so', () => {
    const model = parse('ipvsadm', OTHER);
    expect(kinds(OTHER, {}, 'ipvsadm')).toEqual(['unknown 10.200.0.1:443 ×1', 'NodePort 172.18.0.3:30080 ×1']);
    expect(model.notes).toEqual([expect.stringContaining('Service CIDR unknown')]);
    expect(model.notes?.[0]).toContain(
      '1 virtual server outside it and off the NodePort range (10.200.0.1:443/TCP) is shown as type unknown',
    );
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

describe("an IPVS dump from a cluster whose Service range is not kubeadm's default", () => {
  // The `ipvsadm -ln` of Kubernetes' own IPVS README (pkg/proxy/ipvs/README.md, "Check IPVS proxy
  // rules"): its Services are in 10.0.0.0/24, the API server is 10.0.0.1 and kube-dns 10.0.0.10.
  const README = [
    'IP Virtual Server version 1.2.1 (size=4096)',
    'Prot LocalAddress:Port Scheduler Flags',
    '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
    'TCP  10.0.0.1:443 rr persistent 10800',
    '  -> 192.168.0.1:6443             Masq    1      1          0',
    'TCP  10.0.0.10:53 rr',
    '  -> 172.17.0.2:53                Masq    1      0          0',
    'UDP  10.0.0.10:53 rr',
    '  -> 172.17.0.2:53                Masq    1      0          0',
    '',
  ].join('\n');
  const explainText = async (...flags: string[]) => {
    const dir = mkdtempSync(join(tmpdir(), 'dplab-ipvs-readme-'));
    const file = join(dir, 'ipvsadm.txt');
    writeFileSync(file, README);
    let out = '';
    try {
      const code = await explain.run(
        ['--input', file, '--format', 'ipvsadm', '--frontend', '10.0.0.1:443', ...flags],
        commandContext({ stdout: { write: (t: string) => (out += t) } }),
      );
      expect(code).toBe(0);
      return out;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('without --service-cidr the API server is of unknown type, not an external IP, and the note says how to tell', () => {
    const model = parse('ipvsadm', README);
    expect(kinds(README, {}, 'ipvsadm')).toEqual(['unknown 10.0.0.1:443 ×1', 'unknown 10.0.0.10:53 ×1', 'unknown 10.0.0.10:53 ×1']);
    expect(model.notes).toHaveLength(1);
    const note = model.notes![0];
    expect(note).toMatch(/^Service CIDR unknown: guessed kubeadm's default 10\.96\.0\.0\/12/);
    expect(note).toContain(
      '3 virtual servers outside it and off the NodePort range (10.0.0.1:443/TCP, 10.0.0.10:53/TCP, 10.0.0.10:53/UDP)',
    );
    expect(note).toContain('--service-cidr');
    expect(note).toContain('read a lab cluster live (`dplab explain <mode> <namespace/name>`)');
    expect(toJson(findFrontend(model, '10.0.0.1:443')!).frontends[0]).toMatchObject({
      type: 'unknown',
      affinity: { timeoutSeconds: 10800 },
    });
  });

  it('with --service-cidr 10.0.0.0/24 they are ClusterIPs, and nothing is guessed', () => {
    const model = parse('ipvsadm', README, { serviceCidr: ['10.0.0.0/24'] });
    expect(kinds(README, { serviceCidr: ['10.0.0.0/24'] }, 'ipvsadm')).toEqual([
      'ClusterIP 10.0.0.1:443 ×1',
      'ClusterIP 10.0.0.10:53 ×1',
      'ClusterIP 10.0.0.10:53 ×1',
    ]);
    expect(model.notes).toBeUndefined();
  });

  it("the cluster's ClusterIPs (a live read) say the same", () => {
    const opts = { clusterIPs: ['10.0.0.1', '10.0.0.10'], serviceCidr: '10.97.0.0/16' };
    expect(kinds(README, opts, 'ipvsadm')).toEqual(['ClusterIP 10.0.0.1:443 ×1', 'ClusterIP 10.0.0.10:53 ×1', 'ClusterIP 10.0.0.10:53 ×1']);
    expect(parse('ipvsadm', README, opts).notes).toBeUndefined();
  });

  it('dplab explain --input: "unknown" and the note without the flag, ClusterIP with it', async () => {
    const guessed = await explainText();
    expect(guessed).toMatch(/^unknown {6}10\.0\.0\.1:443\/TCP {3}\(Service range not given: see the note, affinity ClientIP 10800s\)$/m);
    expect(guessed).not.toContain('ExternalIP');
    expect(guessed).toContain('note: Service CIDR unknown');
    const told = await explainText('--service-cidr', '10.0.0.0/24');
    expect(told).toMatch(/^ClusterIP {4}10\.0\.0\.1:443\/TCP {3}\(affinity ClientIP 10800s\)$/m);
    expect(told).not.toContain('note:');
    const json = JSON.parse(await explainText('--json')) as { frontends: Array<{ type: string }> };
    expect(json.frontends.map((f) => f.type)).toEqual(['unknown']);
  });

  it('the mermaid path says "type unknown"', () => {
    const view = findFrontend(parse('ipvsadm', README), '10.0.0.1:443')!;
    expect(toMermaid(view, 'ipvsadm')).toContain('packet to virtual server<br/>10.0.0.1:443/TCP<br/>(type unknown)');
  });
});

describe("kind's default range is classified as before where the range is known", () => {
  // kind's defaults (Services in 10.96.0.0/16, nodes on 172.18.0.0/16), plus a Service's external IP.
  const KIND = [
    'IP Virtual Server version 1.2.1 (size=4096)',
    'Prot LocalAddress:Port Scheduler Flags',
    '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
    'TCP  10.96.0.1:443 rr',
    '  -> 172.18.0.2:6443              Masq    1      0          0',
    'TCP  10.96.45.112:80 rr',
    '  -> 10.244.1.2:8080              Masq    1      0          0',
    '  -> 10.244.2.2:8080              Masq    1      0          0',
    'TCP  172.18.0.3:30080 rr',
    '  -> 10.244.1.2:8080              Masq    1      0          0',
    '  -> 10.244.2.2:8080              Masq    1      0          0',
    'TCP  192.168.99.22:80 rr',
    '  -> 10.244.1.2:8080              Masq    1      0          0',
    '',
  ].join('\n');

  it.each([
    ['--service-cidr 10.96.0.0/16', { serviceCidr: ['10.96.0.0/16'] }],
    ["the cluster's ClusterIPs", { clusterIPs: ['10.96.0.1', '10.96.45.112'] }],
  ])('%s: ClusterIPs, the NodePort, and the external IP an ExternalIP', (_what, opts) => {
    expect(kinds(KIND, opts, 'ipvsadm')).toEqual([
      'ClusterIP 10.96.0.1:443 ×1',
      'ClusterIP 10.96.45.112:80 ×2',
      'ExternalIP 192.168.99.22:80 ×1',
      'NodePort 172.18.0.3:30080 ×2',
    ]);
    expect(parse('ipvsadm', KIND, opts).notes).toBeUndefined();
  });

  it('without the range, addresses in the guess are still shown as ClusterIPs (the note calls it a guess); the external IP is unknown', () => {
    const model = parse('ipvsadm', KIND);
    expect(kinds(KIND, {}, 'ipvsadm')).toEqual([
      'ClusterIP 10.96.0.1:443 ×1',
      'ClusterIP 10.96.45.112:80 ×2',
      'unknown 192.168.99.22:80 ×1',
      'NodePort 172.18.0.3:30080 ×2',
    ]);
    expect(model.notes).toEqual([expect.stringContaining('shown as ClusterIPs, which may be wrong for this cluster')]);
    expect(model.notes?.[0]).toContain('(192.168.99.22:80/TCP) is shown as type unknown');
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
