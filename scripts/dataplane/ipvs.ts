// kube-proxy's IPVS mode: each virtual server is one frontend, its real servers the backends,
// weights normalised to shares. Neither `ipvsadm -Ln` nor /proc/net/ip_vs names Services, so
// names come from the caller (ParseOptions.names) or stay null.
import { hexToIpv4, hexToPort, inCidr, splitIpPort, splitServicePortName, toProtocol } from './addr.ts';
import { backendsWithShares, ModelBuilder } from './builder.ts';
import type { DataplaneModel, Format, Frontend, FrontendType, ParseOptions, Protocol } from './model.ts';
import { ParseError } from './parse-error.ts';
import { weightedShares } from './shares.ts';

const DEFAULT_SERVICE_CIDR = '10.96.0.0/12';
const NODEPORT_RANGE = { min: 30000, max: 32767 };
/** Debian/Ubuntu generic kernels; pass ParseOptions.hz for others (Fedora: 1000). */
export const DEFAULT_HZ = 250;
const HEADER = /^(IP Virtual Server version|Prot LocalAddress:Port|\s*-> RemoteAddress:Port)/;
const SCHEDULERS = new Set(['rr', 'wrr', 'lc', 'wlc', 'lblc', 'lblcr', 'dh', 'sh', 'sed', 'nq', 'fo', 'ovf', 'mh', 'twos']);

interface VirtualServer {
  protocol: Protocol;
  ip: string;
  port: number;
  scheduler: string;
  persistentSeconds: number | null;
  reals: Array<{ ip: string; port: number; forward: string; weight: number }>;
}

type Addr = (token: string) => { ip: string; port: number } | null;

const textAddr: Addr = (t) => {
  const a = splitIpPort(t);
  return a ? { ip: a.ip, port: a.port } : null;
};
const hexAddr: Addr = (t) => {
  const [ip, port] = t.split(':');
  const a = hexToIpv4(ip ?? '');
  const p = hexToPort(port ?? '');
  return a !== null && p !== null ? { ip: a, port: p } : null;
};

export function parseIpvsadm(text: string, opts: ParseOptions = {}): DataplaneModel {
  return toModel('ipvsadm', readVirtualServers(text, textAddr, 1), opts);
}

export function parseProcIpVs(text: string, opts: ParseOptions = {}): DataplaneModel {
  return toModel('proc-ip-vs', readVirtualServers(text, hexAddr, opts.hz ?? DEFAULT_HZ), opts);
}

function readVirtualServers(text: string, addr: Addr, ticksPerSecond: number): VirtualServer[] {
  const out: VirtualServer[] = [];
  let sawHeader = false;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].replace(/\r$/, '');
    const line = raw.trim();
    if (line === '') continue;
    if (HEADER.test(raw)) {
      sawHeader = true;
      continue;
    }
    const f = line.split(/\s+/);
    if (f[0] === '->') {
      const vs = out[out.length - 1];
      const a = addr(f[1] ?? '');
      const weight = Number(f[3]);
      if (!vs || !a || !f[2] || !Number.isInteger(weight) || weight < 0) throw new ParseError('bad real server line', i + 1, raw);
      vs.reals.push({ ...a, forward: f[2], weight });
      continue;
    }
    const protocol = toProtocol(f[0] ?? '');
    const a = addr(f[1] ?? '');
    const scheduler = f[2] ?? '';
    if (!protocol || !a || !SCHEDULERS.has(scheduler)) {
      throw new ParseError(f[0] === 'FWM' ? 'firewall-mark virtual servers are not kube-proxy Services' : 'bad virtual server line', i + 1, raw);
    }
    const p = f.indexOf('persistent');
    const persistentSeconds = p >= 0 ? Number(f[p + 1]) / ticksPerSecond : null;
    if (persistentSeconds !== null && !Number.isFinite(persistentSeconds)) throw new ParseError('bad persistent timeout', i + 1, raw);
    out.push({ protocol, ...a, scheduler, persistentSeconds, reals: [] });
  }
  if (!sawHeader) throw new ParseError('no "IP Virtual Server version" header: is this ipvsadm -Ln or /proc/net/ip_vs?', 1, lines[0] ?? '');
  return out;
}

function toModel(format: Format, servers: VirtualServer[], opts: ParseOptions): DataplaneModel {
  const cidr = opts.serviceCidr ?? DEFAULT_SERVICE_CIDR;
  const builder = new ModelBuilder(format);
  const named = servers.map((vs) => ({ vs, name: lookupName(vs, opts.names) }));
  for (const { vs, name } of named) {
    const type = typeOf(vs, cidr);
    const list = vs.reals.map((r) => ({ ip: r.ip, port: r.port, via: `${r.forward} weight ${r.weight}`, detail: `weight ${r.weight}` }));
    const fe: Frontend = {
      type, ip: vs.ip, port: vs.port, protocol: vs.protocol,
      backends: backendsWithShares(list, weightedShares(vs.reals.map((r) => r.weight))).filter((b) => b.share > 0),
      localOnly: false, dropsWithoutLocalEndpoints: false,
      affinity: vs.persistentSeconds === null ? null : { timeoutSeconds: vs.persistentSeconds },
      noBackendVerdict: null,
      path: [`IPVS ${vs.protocol} ${vs.ip}:${vs.port}`],
      chooser: vs.persistentSeconds === null ? vs.scheduler : `${vs.scheduler}, persistent`,
    };
    builder.add(name?.service ?? null, name?.portName ?? null, fe);
  }
  inferLocalPolicy(builder);
  const reals = servers.reduce((n, vs) => n + vs.reals.length, 0);
  return builder.build(servers.length, 'virtual servers', { virtualServers: servers.length, realServers: reals });
}

/**
 * IPVS output does not say "Local". kube-proxy gives an external virtual server fewer real
 * servers than its ClusterIP one only under externalTrafficPolicy: Local, so a named NodePort
 * with a strict subset of its ClusterIP's backends is marked local (and dropping when empty).
 */
function inferLocalPolicy(builder: ModelBuilder): void {
  for (const sp of builder.peek()) {
    if (!sp.service) continue;
    const cluster = sp.frontends.find((f) => f.type === 'ClusterIP');
    if (!cluster || cluster.backends.length === 0) continue;
    const all = new Set(cluster.backends.map((b) => `${b.ip}:${b.port}`));
    for (const fe of sp.frontends) {
      if (fe.type === 'ClusterIP' || fe.backends.length >= all.size) continue;
      if (!fe.backends.every((b) => all.has(`${b.ip}:${b.port}`))) continue;
      fe.localOnly = true;
      fe.dropsWithoutLocalEndpoints = fe.backends.length === 0;
    }
  }
}

function typeOf(vs: VirtualServer, cidr: string): FrontendType {
  if (inCidr(vs.ip, cidr)) return 'ClusterIP';
  if (vs.port >= NODEPORT_RANGE.min && vs.port <= NODEPORT_RANGE.max) return 'NodePort';
  return 'ExternalIP';
}

function lookupName(vs: VirtualServer, names: Record<string, string> | undefined) {
  if (!names) return null;
  const value = names[`${vs.protocol}/${vs.ip}:${vs.port}`] ?? names[`${vs.ip}:${vs.port}`];
  return value ? splitServicePortName(value) : null;
}
