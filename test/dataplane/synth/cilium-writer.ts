// Prints what `cilium-dbg service list` shows with kube-proxy replacement: one row per frontend
// (ClusterIP; NodePort once, as 0.0.0.0:port, the way Cilium 1.18's load balancer lists its
// frontends table, see pkg/loadbalancer/tests/testdata/nodeport.txtar), backends as "n => ip:port/PROTO (state)",
// with the numeric ID column first, as cilium-dbg/cmd/service_list.go prints it (the real 1.19.4 in
// fixtures/cilium/recorded-kind-v1.19.4.txt does too, rows in ID order), and the
// api/v1 models (ServiceSpec, FrontendAddress, BackendAddress) for `-o json`.
import { externalEndpoints, type SynthCluster, type SynthEndpoint, type SynthService } from '../../../scripts/dataplane/synth/cluster.ts';

const TABWRITER_PADDING = 3;
// Cilium's default backend weight (used only by Maglev; random selection ignores it).
const DEFAULT_WEIGHT = 100;

interface Row {
  id: number;
  ip: string;
  port: number;
  protocol: 'TCP' | 'UDP';
  type: 'ClusterIP' | 'NodePort';
  scope: 'external' | 'internal';
  service: SynthService;
  backends: SynthEndpoint[];
}

function rows(c: SynthCluster): Row[] {
  const out: Row[] = [];
  let id = 1;
  for (const s of c.services) {
    const protocol = s.protocol === 'tcp' ? 'TCP' : 'UDP';
    out.push({
      id: id++,
      ip: s.clusterIP,
      port: s.port,
      protocol,
      type: 'ClusterIP',
      scope: 'external',
      service: s,
      backends: s.endpoints,
    });
    if (!s.nodePort) continue;
    const ip = '0.0.0.0';
    out.push({
      id: id++,
      ip,
      port: s.nodePort,
      protocol,
      type: 'NodePort',
      scope: 'external',
      service: s,
      backends: externalEndpoints(c, s),
    });
    // External Local and internal Cluster policy differ: Cilium keeps a second, internal-scope frontend for in-cluster clients.
    if (s.externalTrafficPolicyLocal)
      out.push({ id: id++, ip, port: s.nodePort, protocol, type: 'NodePort', scope: 'internal', service: s, backends: s.endpoints });
  }
  return out;
}

export function writeCiliumServiceList(c: SynthCluster): string {
  const frontend = (r: Row) => `${r.ip}:${r.port}/${r.protocol}${r.scope === 'internal' ? '/i' : ''}`;
  const table: string[][] = [['ID', 'Frontend', 'Service Type', 'Backend']];
  for (const r of rows(c)) {
    const be = r.backends.map((b, i) => `${i + 1} => ${b.ip}:${r.service.targetPort}/${r.protocol} (active)`);
    const lead = [String(r.id), frontend(r), r.type];
    table.push([...lead, be[0] ?? '']);
    for (const more of be.slice(1)) table.push([...lead.map(() => ''), more]);
  }
  return tabwrite(table);
}

export function writeCiliumServiceJson(c: SynthCluster): string {
  const services = rows(c).map((r) => {
    const policy = (local: boolean | undefined) => (local ? 'Local' : 'Cluster');
    const spec = {
      'backend-addresses': r.backends.map((b) => ({
        ip: b.ip,
        nodeName: b.node,
        port: r.service.targetPort,
        protocol: r.protocol,
        state: 'active',
        weight: DEFAULT_WEIGHT,
      })),
      flags: {
        extTrafficPolicy: policy(r.service.externalTrafficPolicyLocal),
        intTrafficPolicy: 'Cluster',
        name: r.service.name,
        namespace: r.service.namespace,
        natPolicy: 'None',
        trafficPolicy: policy(r.service.externalTrafficPolicyLocal),
        type: r.type,
      },
      'frontend-address': { ip: r.ip, port: r.port, protocol: r.protocol, scope: r.scope },
      id: r.id,
    };
    return { spec, status: { realized: spec } };
  });
  return `${JSON.stringify(services, null, 2)}\n`;
}

/** Go's text/tabwriter with minwidth 5, padding 3, cells terminated by a tab (trailing cell padded too). */
function tabwrite(table: string[][]): string {
  const MIN_WIDTH = 5;
  const widths: number[] = [];
  for (const row of table) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length + TABWRITER_PADDING, MIN_WIDTH)));
  return `${table
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('')
        .trimEnd(),
    )
    .join('\n')}\n`;
}
