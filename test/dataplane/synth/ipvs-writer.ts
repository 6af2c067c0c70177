// Prints kube-proxy IPVS mode as `ipvsadm -Ln` (ipvsadm.c print_service_entry layout, sorted by
// protocol, address, port as ipvsadm sorts) and as /proc/net/ip_vs (ip_vs_ctl.c ip_vs_info_seq_show:
// hex addresses, persistence timeout in jiffies).
import { externalEndpoints, type SynthCluster } from '../../../scripts/dataplane/synth/cluster.ts';

const SCHEDULER = 'rr';
const FORWARD = 'Masq';
const WEIGHT = 1;
const FULL_MASK = 'FFFFFFFF';

interface VirtualServer {
  protocol: 'TCP' | 'UDP';
  ip: string;
  port: number;
  persistent: number | null;
  reals: Array<{ ip: string; port: number }>;
}

function virtualServers(c: SynthCluster): VirtualServer[] {
  const out: VirtualServer[] = [];
  for (const s of c.services) {
    const protocol = s.protocol === 'tcp' ? 'TCP' : 'UDP';
    const persistent = s.affinitySeconds ?? null;
    out.push({ protocol, ip: s.clusterIP, port: s.port, persistent, reals: s.endpoints.map((e) => ({ ip: e.ip, port: s.targetPort })) });
    if (s.nodePort) {
      const reals = (s.endpoints.length ? externalEndpoints(c, s) : []).map((e) => ({ ip: e.ip, port: s.targetPort }));
      out.push({ protocol, ip: c.node.ip, port: s.nodePort, persistent, reals });
    }
  }
  return out;
}

export function writeIpvsadm(c: SynthCluster): string {
  const sorted = [...virtualServers(c)].sort(
    (a, b) => a.protocol.localeCompare(b.protocol) || ipNum(a.ip) - ipNum(b.ip) || a.port - b.port,
  );
  const lines = [
    'IP Virtual Server version 1.2.1 (size=4096)',
    'Prot LocalAddress:Port Scheduler Flags',
    '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
  ];
  for (const vs of sorted) {
    lines.push(`${vs.protocol}  ${vs.ip}:${vs.port} ${SCHEDULER}${vs.persistent ? ` persistent ${vs.persistent}` : ''}`);
    for (const r of [...vs.reals].sort((a, b) => ipNum(a.ip) - ipNum(b.ip))) {
      lines.push(
        `  -> ${`${r.ip}:${r.port}`.padEnd(28)} ${FORWARD.padEnd(7)} ${String(WEIGHT).padEnd(6)} ${'0'.padEnd(10)} ${'0'.padEnd(10)}`.trimEnd(),
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

export function writeProcIpVs(c: SynthCluster, hz: number): string {
  const lines = [
    'IP Virtual Server version 1.2.1 (size=4096)',
    'Prot LocalAddress:Port Scheduler Flags',
    '  -> RemoteAddress:Port Forward Weight ActiveConn InActConn',
  ];
  for (const vs of virtualServers(c)) {
    // The kernel prints "%s  %08X:%04X %s %s " (scheduler, then the "ops " flag or nothing): two spaces after the scheduler.
    const head = `${vs.protocol}  ${hexIp(vs.ip)}:${hexPort(vs.port)} ${SCHEDULER}  `;
    lines.push(vs.persistent ? `${head}persistent ${vs.persistent * hz} ${FULL_MASK}` : head);
    for (const r of vs.reals) {
      lines.push(
        `  -> ${hexIp(r.ip)}:${hexPort(r.port)}      ${FORWARD.padEnd(7)} ${String(WEIGHT).padEnd(6)} ${'0'.padEnd(10)} ${'0'.padEnd(10)}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

function ipNum(ip: string): number {
  return ip.split('.').reduce((a, p) => a * 256 + Number(p), 0);
}
function hexIp(ip: string): string {
  return ip
    .split('.')
    .map((p) => Number(p).toString(16).toUpperCase().padStart(2, '0'))
    .join('');
}
function hexPort(port: number): string {
  return port.toString(16).toUpperCase().padStart(4, '0');
}
