// Cilium's kube-proxy replacement, read from `cilium-dbg service list` (text: `ID  Frontend  Service
// Type  Backend`, as 1.18 and 1.19 print it; a paste without the ID column reads the same) or `-o json`. One row per frontend; backends in state "active" share new
// connections equally (random selection; Maglev also spreads evenly). When a Service's external
// and internal traffic policies differ, Cilium keeps a second, internal-scope frontend ("/i") for
// in-cluster clients: it is folded into its external twin. Cilium 1.18's load balancer lists a
// NodePort once, as 0.0.0.0:port (1.17 also listed it per node address). Session affinity is not
// shown by this command. Types come from pkg/loadbalancer's SVCType; a row of any other type is
// left out with a note, never silently.
import { splitIpPort, splitServicePortName, toProtocol, hostPort } from './addr.ts';
import { backendsWithShares, ModelBuilder } from './builder.ts';
import { isRecord, parseJsonInput } from './json-input.ts';
import type { DataplaneModel, Format, Frontend, FrontendType, ParseOptions, Protocol } from './model.ts';
import { ParseError } from './parse-error.ts';
import { equalShares } from './shares.ts';

const ACTIVE = 'active';
const TYPES: Record<string, FrontendType> = {
  ClusterIP: 'ClusterIP',
  NodePort: 'NodePort',
  ExternalIPs: 'ExternalIP',
  LoadBalancer: 'LoadBalancer',
  HostPort: 'HostPort',
  LocalRedirect: 'LocalRedirect',
};
const BACKEND = /^(\d+) => (\S+?)(?: \((\w+)\))?(?: \(preferred\))?$/;

interface Row {
  line: number;
  text: string;
  ip: string;
  port: number;
  protocol: Protocol;
  internal: boolean;
  type: FrontendType | null;
  /** The type as printed, for the note when it is not one we know. */
  rawType: string;
  service: string | null;
  extLocal: boolean | null;
  intLocal: boolean | null;
  backends: Array<{ ip: string; port: number; state: string }>;
}

/** The text form does not name Services; ParseOptions.names ("10.96.45.112:80" -> "default/web") fills them in. */
export function parseCiliumServiceList(text: string, opts: ParseOptions = {}): DataplaneModel {
  const lines = text.split('\n');
  const head = lines.findIndex((l) => l.trim() !== '');
  const header = (lines[head] ?? '').trim().split(/\s{2,}/);
  const hasId = header[0] === 'ID';
  const expected = hasId ? ['ID', 'Frontend', 'Service Type', 'Backend'] : ['Frontend', 'Service Type', 'Backend'];
  if (header.join('|') !== expected.join('|'))
    throw new ParseError('not `cilium-dbg service list` output: unexpected header', head + 1, lines[head] ?? '');
  const rows: Row[] = [];
  for (let i = head + 1; i < lines.length; i++) {
    const raw = lines[i].replace(/\r$/, '');
    if (raw.trim() === '') continue;
    const continuation = /^\s/.test(raw);
    const cells = raw.trim().split(/\s{2,}/);
    if (continuation) {
      const row = rows[rows.length - 1];
      if (!row || cells.length !== 1) throw new ParseError('backend line without a frontend', i + 1, raw);
      row.backends.push(backendOf(cells[0], i + 1, raw));
      continue;
    }
    const [fe, type, be] = hasId ? cells.slice(1) : cells;
    if (hasId && !/^\d+$/.test(cells[0] ?? '')) throw new ParseError('bad service ID', i + 1, raw);
    const addr = frontendOf(fe ?? '', i + 1, raw);
    const svcType = TYPES[(type ?? '').replace(/ \(Remote\)$/, '')];
    if (!type) throw new ParseError('row without a service type', i + 1, raw);
    const given = opts.names?.[`${addr.protocol}/${addr.ip}:${addr.port}`] ?? opts.names?.[`${addr.ip}:${addr.port}`] ?? null;
    rows.push({
      line: i + 1,
      text: raw,
      ...addr,
      type: svcType ?? null,
      rawType: type,
      service: given && splitServicePortName(given) ? given : null,
      extLocal: null,
      intLocal: null,
      backends: be ? [backendOf(be, i + 1, raw)] : [],
    });
  }
  return toModel('cilium', rows, rows.length);
}

export function parseCiliumServiceJson(text: string): DataplaneModel {
  const root = parseJsonInput(text, 'cilium-dbg service list -o json');
  if (!Array.isArray(root)) throw new ParseError('expected a JSON array of services', 1, text.split('\n')[0] ?? '');
  const rows = root.map((svc, i): Row => {
    const spec =
      isRecord(svc) && isRecord(svc.status) && isRecord(svc.status.realized) ? svc.status.realized : isRecord(svc) ? svc.spec : null;
    const where = `service #${i + 1}`;
    if (!isRecord(spec) || !isRecord(spec['frontend-address']))
      throw new ParseError(`${where} has no frontend-address`, 1, JSON.stringify(svc) ?? '');
    const fa = spec['frontend-address'];
    const protocol = toProtocol(String(fa.protocol ?? 'TCP'));
    if (typeof fa.ip !== 'string' || typeof fa.port !== 'number' || !protocol)
      throw new ParseError(`${where}: bad frontend-address`, 1, JSON.stringify(fa));
    const flags = isRecord(spec.flags) ? spec.flags : {};
    const name = typeof flags.namespace === 'string' && typeof flags.name === 'string' ? `${flags.namespace}/${flags.name}` : null;
    const list = Array.isArray(spec['backend-addresses']) ? spec['backend-addresses'] : [];
    const backends = list.map((b) => {
      if (!isRecord(b) || typeof b.ip !== 'string' || typeof b.port !== 'number')
        throw new ParseError(`${where}: bad backend`, 1, JSON.stringify(b) ?? '');
      return { ip: b.ip, port: b.port, state: typeof b.state === 'string' ? b.state : ACTIVE };
    });
    return {
      line: 1,
      text: '',
      ip: fa.ip,
      port: fa.port,
      protocol,
      internal: fa.scope === 'internal',
      type: TYPES[String(flags.type)] ?? null,
      rawType: String(flags.type ?? '(none)'),
      service: name && splitServicePortName(name) ? name : null,
      extLocal: flags.extTrafficPolicy === undefined ? null : flags.extTrafficPolicy === 'Local',
      intLocal: flags.intTrafficPolicy === undefined ? null : flags.intTrafficPolicy === 'Local',
      backends,
    };
  });
  return toModel('cilium-json', rows, rows.length);
}

function toModel(format: Format, rows: Row[], entries: number): DataplaneModel {
  const builder = new ModelBuilder(format);
  const notes: string[] = [];
  const key = (r: Row) => `${r.protocol}/${hostPort(r.ip, r.port)}`;
  const internalTwins = new Map(rows.filter((r) => r.internal).map((r) => [key(r), r]));
  const externalKeys = new Set(rows.filter((r) => !r.internal).map(key));
  // The text form does not name Services: borrow the name of the ClusterIP row with the same backends.
  const byBackends = new Map<string, string>();
  for (const r of rows) if (r.service && r.type === 'ClusterIP') byBackends.set(backendKey(r), r.service);
  for (const r of rows) {
    if (!r.type) {
      notes.push(
        `${r.text ? `line ${r.line}` : `frontend ${hostPort(r.ip, r.port)}`}: service type "${r.rawType}" is not one this parser knows; that frontend is left out`,
      );
      continue;
    }
    // An internal-scope row is folded into its external twin; alone, it is a frontend of its own.
    if (r.internal && externalKeys.has(key(r))) continue;
    const twin = r.internal ? undefined : internalTwins.get(key(r));
    const active = r.backends.filter((b) => b.state === ACTIVE);
    const localOnly = isLocal(r, twin);
    const list = active.map((b) => ({ ip: b.ip, port: b.port, via: `backend ${hostPort(b.ip, b.port)}`, detail: 'equal (random)' }));
    const external = r.type !== 'ClusterIP' && !r.internal;
    const fe: Frontend = {
      type: r.type,
      ip: r.ip,
      port: r.port,
      protocol: r.protocol,
      backends: backendsWithShares(list, equalShares(list.length)),
      localOnly,
      // Local policy with nothing local: outside traffic is dropped here while the Service has endpoints elsewhere.
      dropsWithoutLocalEndpoints: localOnly && external && list.length === 0 && (twin?.backends.length ?? 1) > 0,
      affinity: null,
      noBackendVerdict: null,
      path: ['socket connect() / tc', `service map ${hostPort(r.ip, r.port)}/${r.protocol}`],
      chooser: 'random',
      ...(twin ? { internalTwinBackends: twin.backends.map((b) => hostPort(b.ip, b.port)).sort() } : {}),
    };
    const service = r.service ?? (r.type === 'ClusterIP' ? null : (byBackends.get(backendKey(twin ?? r)) ?? null));
    // Names arrive as `ns/name` or `ns/name:port`; split like the other formats so look-ups by `ns/name` work.
    const named = service ? splitServicePortName(service) : null;
    builder.add(named?.service ?? null, named?.portName ?? null, fe);
  }
  const backends = rows.reduce((n, r) => n + r.backends.length, 0);
  const model = builder.build(entries, 'frontends', { frontends: rows.length, backends });
  if (notes.length) model.notes = notes;
  return model;
}

/**
 * Which traffic policy a frontend answers to: ClusterIPs and internal-scope rows to
 * internalTrafficPolicy, the rest to externalTrafficPolicy. JSON says so in its flags; text only
 * shows the twin, whose backends tell which side is the local one (a strict subset of the other's).
 */
function isLocal(r: Row, twin: Row | undefined): boolean {
  const internalSide = r.type === 'ClusterIP' || r.internal;
  const flag = internalSide ? r.intLocal : r.extLocal;
  if (flag !== null) return flag;
  if (!twin) return false;
  const mine = new Set(r.backends.map((b) => hostPort(b.ip, b.port)));
  const theirs = new Set(twin.backends.map((b) => hostPort(b.ip, b.port)));
  return mine.size < theirs.size && [...mine].every((b) => theirs.has(b));
}

function backendKey(r: Row): string {
  return `${r.protocol}|${r.backends
    .map((b) => hostPort(b.ip, b.port))
    .sort()
    .join(',')}`;
}

function frontendOf(cell: string, line: number, raw: string): { ip: string; port: number; protocol: Protocol; internal: boolean } {
  const internal = cell.endsWith('/i');
  const a = splitIpPort(internal ? cell.slice(0, -2) : cell);
  if (!a) throw new ParseError('bad frontend address', line, raw);
  return { ip: a.ip, port: a.port, protocol: a.protocol ?? 'TCP', internal };
}

function backendOf(cell: string, line: number, raw: string): { ip: string; port: number; state: string } {
  const m = BACKEND.exec(cell.trim());
  const a = m ? splitIpPort(m[2]) : null;
  if (!m || !a) throw new ParseError('bad backend "n => ip:port"', line, raw);
  return { ip: a.ip, port: a.port, state: m[3] ?? ACTIVE };
}
