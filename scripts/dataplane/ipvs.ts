// kube-proxy's IPVS mode: each virtual server is one frontend, its real servers the backends,
// weights normalised to shares. Neither `ipvsadm -Ln` nor /proc/net/ip_vs names Services, so
// names come from the caller (ParseOptions.names) or stay null.
import { hexToIpv4, hexToPort, inCidr, normaliseIpv6, splitIpPort, splitServicePortName, toProtocol, hostPort } from './addr.ts';
import { backendsWithShares, ModelBuilder } from './builder.ts';
import type { DataplaneModel, Format, Frontend, FrontendType, ParseOptions, Protocol } from './model.ts';
import { ParseError } from './parse-error.ts';
import { weightedShares } from './shares.ts';

/** kubeadm's default Service CIDR: only a guess, used (and said so) when neither the CIDR nor the ClusterIPs are known. */
const GUESSED_SERVICE_CIDR = '10.96.0.0/12';
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
/** /proc/net/ip_vs: "0A600001:01BB" (IPv4 after ntohl) or "[fd00:0010:…:0001]:01BB" (%pI6, full form). */
const hexAddr: Addr = (t) => {
  const v6 = /^\[([0-9A-Fa-f:]+)\]:([0-9A-Fa-f]{4})$/.exec(t);
  if (v6) {
    const ip = normaliseIpv6(v6[1]);
    const port = hexToPort(v6[2]);
    return ip !== null && port !== null ? { ip, port } : null;
  }
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

interface Read {
  servers: VirtualServer[];
  notes: string[];
  firewallMarks: number;
}

/**
 * One line at a time; a line it cannot read is set aside with a note (and, for a virtual server,
 * the real servers under it), so one unexpected line never hides the rest. Only input with no
 * ipvsadm / /proc header at all is rejected outright.
 */
function readVirtualServers(text: string, addr: Addr, ticksPerSecond: number): Read {
  const servers: VirtualServer[] = [];
  const notes: string[] = [];
  let firewallMarks = 0;
  let sawHeader = false;
  /** The virtual server real-server lines belong to; null after one that was set aside. */
  let current: VirtualServer | null = null;
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
      if (!current) continue; // under a virtual server that was set aside
      const a = addr(f[1] ?? '');
      const weight = Number(f[3]);
      if (!a || !f[2] || !Number.isInteger(weight) || weight < 0) {
        notes.push(`line ${i + 1}: real server line not understood, left out: ${raw.trim().slice(0, 120)}`);
        continue;
      }
      current.reals.push({ ...a, forward: f[2], weight });
      continue;
    }
    current = null;
    if (f[0] === 'FWM') {
      // Firewall-mark virtual servers (kube-proxy makes none; keepalived and hand-made setups do).
      firewallMarks++;
      continue;
    }
    const protocol = toProtocol(f[0] ?? '');
    const a = addr(f[1] ?? '');
    const scheduler = f[2] ?? '';
    const p = f.indexOf('persistent');
    const persistentSeconds = p >= 0 ? Number(f[p + 1]) / ticksPerSecond : null;
    if (!protocol || !a || !SCHEDULERS.has(scheduler) || (persistentSeconds !== null && !Number.isFinite(persistentSeconds))) {
      notes.push(`line ${i + 1}: virtual server line not understood, left out with its real servers: ${raw.trim().slice(0, 120)}`);
      continue;
    }
    current = { protocol, ...a, scheduler, persistentSeconds, reals: [] };
    servers.push(current);
  }
  if (!sawHeader) throw new ParseError('no "IP Virtual Server version" header: is this ipvsadm -Ln or /proc/net/ip_vs?', 1, lines[0] ?? '');
  if (firewallMarks)
    notes.push(
      `${firewallMarks} firewall-mark (FWM) virtual server${firewallMarks === 1 ? '' : 's'} left out: kube-proxy does not make them, so they are no Service's`,
    );
  return { servers, notes, firewallMarks };
}

function toModel(format: Format, read: Read, opts: ParseOptions): DataplaneModel {
  const { servers } = read;
  const notes = [...read.notes];
  const { classify, guessed } = classifier(opts);
  const builder = new ModelBuilder(format);
  const named = servers.map((vs) => ({ vs, name: lookupName(vs, opts.names) }));
  const unknown: VirtualServer[] = [];
  for (const { vs, name } of named) {
    const type = classify(vs);
    if (type === 'unknown') unknown.push(vs);
    const list = vs.reals.map((r) => ({ ip: r.ip, port: r.port, via: `${r.forward} weight ${r.weight}`, detail: `weight ${r.weight}` }));
    const fe: Frontend = {
      type,
      ip: vs.ip,
      port: vs.port,
      protocol: vs.protocol,
      backends: backendsWithShares(list, weightedShares(vs.reals.map((r) => r.weight))).filter((b) => b.share > 0),
      localOnly: false,
      dropsWithoutLocalEndpoints: false,
      affinity: vs.persistentSeconds === null ? null : { timeoutSeconds: vs.persistentSeconds },
      noBackendVerdict: null,
      path: [`IPVS ${vs.protocol} ${hostPort(vs.ip, vs.port)}`],
      chooser: vs.persistentSeconds === null ? vs.scheduler : `${vs.scheduler}, persistent`,
    };
    builder.add(name?.service ?? null, name?.portName ?? null, fe);
  }
  if (guessed) notes.push(guessedRangeNote(unknown));
  inferLocalPolicy(builder);
  const reals = servers.reduce((n, vs) => n + vs.reals.length, 0);
  const model = builder.build(servers.length, 'virtual servers', {
    virtualServers: servers.length,
    realServers: reals,
    firewallMarks: read.firewallMarks,
  });
  if (notes.length) model.notes = notes;
  return model;
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

/**
 * IPVS says nothing about a virtual server's kind. A ClusterIP is one of the cluster's ClusterIPs
 * (known on a live read) or an address in the Service CIDR (a flag for files); anything else on a
 * NodePort-range port is a NodePort, the rest an external or load-balancer IP.
 *
 * With neither given, kubeadm's default CIDR is a guess: an address in it is shown as a ClusterIP
 * (and the note says it is a guess), but an address outside it proves nothing, since clusters
 * pick other ranges (the Kubernetes README's own example has the API server on 10.0.0.1), so
 * what the guess alone would call an external IP is `unknown`, and the note names it.
 */
function classifier(opts: ParseOptions): { classify: (vs: VirtualServer) => FrontendType; guessed: boolean } {
  const clusterIPs = opts.clusterIPs ? new Set(opts.clusterIPs) : null;
  const cidrs = opts.serviceCidr === undefined ? null : [opts.serviceCidr].flat();
  const guessed = !clusterIPs && !cidrs;
  const range = cidrs ?? (guessed ? [GUESSED_SERVICE_CIDR] : []);
  const classify = (vs: VirtualServer): FrontendType => {
    if (clusterIPs?.has(vs.ip) || range.some((c) => inCidr(vs.ip, c))) return 'ClusterIP';
    if (vs.port >= NODEPORT_RANGE.min && vs.port <= NODEPORT_RANGE.max) return 'NodePort';
    return guessed ? 'unknown' : 'ExternalIP';
  };
  return { classify, guessed };
}

/** Unknown virtual servers the note lists by address before it only counts the rest. */
const LISTED_UNKNOWN = 4;

/** What the guessed range decided, which virtual servers it left unknown, and how to tell the range. */
function guessedRangeNote(unknown: readonly VirtualServer[]): string {
  const at = (vs: VirtualServer) => `${hostPort(vs.ip, vs.port)}/${vs.protocol}`;
  const listed = unknown.slice(0, LISTED_UNKNOWN).map(at).join(', ');
  const more = unknown.length > LISTED_UNKNOWN ? ` and ${unknown.length - LISTED_UNKNOWN} more` : '';
  const one = unknown.length === 1;
  return [
    `Service CIDR unknown: guessed kubeadm's default ${GUESSED_SERVICE_CIDR}, so virtual servers in it are shown as ClusterIPs, which may be wrong for this cluster.`,
    ...(unknown.length
      ? [
          `${unknown.length} virtual server${one ? '' : 's'} outside it and off the NodePort range (${listed}${more}) ${one ? 'is' : 'are'} shown as type unknown: a ClusterIP of another range, an external IP or a load-balancer IP.`,
        ]
      : []),
    'Tell the range with --service-cidr (`kubectl get servicecidrs` shows it), or read a lab cluster live (`dplab explain <mode> <namespace/name>`), which asks the API server.',
  ].join(' ');
}

function lookupName(vs: VirtualServer, names: Record<string, string> | undefined) {
  if (!names) return null;
  const value = names[`${vs.protocol}/${hostPort(vs.ip, vs.port)}`] ?? names[hostPort(vs.ip, vs.port)];
  return value ? splitServicePortName(value) : null;
}
