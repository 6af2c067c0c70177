// `cilium-dbg monitor -t trace -t trace-sock -t drop -v` output, kept to the traced flow, into one
// PacketTrace per connection. Its lines (fixtures/cilium-monitor/ holds real captures; README there):
//   -> endpoint 1079 flow 0x36f1d902 , identity 59248->23091 state new ifindex lxce502bece2a00 orig-ip 10.247.1.57: 10.247.1.57:60532 -> 10.247.1.182:8080 tcp SYN
//   -> overlay flow 0xf3f995a7 , identity 59248->23091 state new ifindex cilium_vxlan orig-ip 0.0.0.0: 10.247.1.57:54822 -> 10.247.2.183:8080 tcp SYN
//   CPU 01: [pre-xlate-fwd] cgroup_id: 413313 sock_cookie: 211308, dst [10.99.149.63]:80 tcp
//   xx drop (Policy denied) flow 0x8f2a1c3d to endpoint 1204, ifindex 24, file bpf_lxc.c:2004, , identity 25478->31902: 10.20.1.113:44120 -> 10.20.1.88:8080 tcp SYN
// Cilium has no chains: each event is a step of kind `event` in table `cilium`, its chain the
// observation point (`to-endpoint`, `to-overlay`, `from-endpoint`, `sock pre-xlate-fwd`, `drop`).
// Where the backend was chosen is read from the connection's first packet: already addressed to a
// backend (the socket load balancer rewrote the address at connect(), so the packet never carried
// the Service address), or addressed to the Service and seen again addressed to a backend (the
// BPF program on the pod's interface translated it, per packet). Every other line (other flows,
// the monitor's banner and log lines, anything it prints that is not an event) is left out.
import { parsePort } from '../addr.ts';
import type { PacketTrace, TraceStep } from '../../wire/trace.ts';
import type { Address, FlowTarget } from './flow.ts';

// `-> endpoint 1079`, `-> overlay`, `<- endpoint 161`, `-> host from …`: the direction and the point, then the fields.
const TRACE =
  /^(->|<-) (\w+)(?: (\d+))?.*? flow (0x[0-9a-f]+) , identity (\S+)->(\S+) state (\S+) ifindex (\S+) orig-ip (\S+): (\S+) -> (\S+) (tcp|udp|sctp)\b ?(.*)$/;
const DROP =
  /^xx drop \((.+?)\)(?= flow| to endpoint)(?: flow (0x[0-9a-f]+))?.*?, identity (\S+)->(\S+): (\S+) -> (\S+) (tcp|udp|sctp)\b ?(.*)$/;
const SOCK =
  /^CPU \d+: \[((?:pre|post)-xlate-(?:fwd|rev))\] cgroup_id: (\d+) sock_cookie: (\d+), dst \[([^\]]+)\]:(\d+) (tcp|udp|sctp)\s*$/;

function hostPort(text: string): Address | null {
  const at = text.lastIndexOf(':');
  if (at < 0) return null;
  const port = parsePort(text.slice(at + 1));
  return port === null ? null : { ip: text.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port };
}

const same = (a: Address, b: Address) => a.ip === b.ip && a.port === b.port;
const label = (a: Address) => `${a.ip}:${a.port}`;

interface Seen {
  protocol: string;
  src: Address;
  dst: Address;
  step: TraceStep;
  /** The datapath's flow hash (`flow 0x36f1d902`), null when not printed. */
  hash: string | null;
  /** `state new` (a connection's first packets), or the drop of one. */
  opens: boolean;
  drop: boolean;
}

/** A packet event of the flow's kind: its addresses read, the step worded (`packet`: the addresses and flags as printed). */
function packetEvent(
  m: { src: string; dst: string; protocol: string; flags: string; hash: string | null; opens: boolean },
  step: (packet: string) => Omit<TraceStep, 'table' | 'kind' | 'target'>,
): Seen | null {
  const from = hostPort(m.src);
  const to = hostPort(m.dst);
  if (!from || !to) return null;
  const packet = `${label(from)} -> ${label(to)} ${m.protocol}${m.flags ? ` ${m.flags}` : ''}`;
  const s = step(packet);
  return {
    protocol: m.protocol,
    src: from,
    dst: to,
    hash: m.hash,
    opens: m.opens,
    drop: s.verdict === 'drop',
    step: { table: 'cilium', kind: 'event', target: null, ...s },
  };
}

function eventOf(line: string): Seen | { sock: TraceStep; dst: Address; protocol: string } | null {
  const t = TRACE.exec(line);
  if (t) {
    const [, dir, point, id, hash, srcId, dstId, state, ifindex, , src, dst, protocol, flags] = t;
    return packetEvent({ src, dst, protocol, flags, hash, opens: state === 'new' }, (packet) => ({
      chain: `${dir === '->' ? 'to' : 'from'}-${point}`,
      rule: `${packet} (state ${state}, ifindex ${ifindex}, identity ${srcId}->${dstId}, flow ${hash})`,
      handle: id ?? null,
      verdict: 'forward',
    }));
  }
  const d = DROP.exec(line);
  if (d) {
    const [, reason, hash, srcId, dstId, src, dst, protocol, flags] = d;
    return packetEvent({ src, dst, protocol, flags, hash: hash ?? null, opens: true }, (packet) => ({
      chain: 'drop',
      rule: `${reason}: ${packet} (identity ${srcId}->${dstId})`,
      handle: null,
      verdict: 'drop',
    }));
  }
  const s = SOCK.exec(line);
  if (s) {
    const [, point, cgroup, cookie, ip, portText, protocol] = s;
    const port = parsePort(portText);
    if (port === null) return null;
    return {
      protocol,
      dst: { ip, port },
      sock: {
        table: 'cilium',
        chain: `sock ${point}`,
        kind: 'event',
        rule: `dst ${label({ ip, port })} ${protocol} (cgroup ${cgroup}, socket ${cookie})`,
        handle: null,
        verdict: 'translate',
        target: null,
      },
    };
  }
  return null;
}

/**
 * The connections of the flow in the monitor's output. Only whole lines are read: what follows
 * the last newline is still being printed, and is left for the next read.
 */
export function parseCiliumMonitor(text: string, target: FlowTarget): PacketTrace[] {
  const { flow, backends } = target;
  const service: Address = { ip: flow.ip, port: flow.port };
  const isBackend = (a: Address) => backends.some((b) => same(a, b));
  const conns = new Map<string, PacketTrace>();
  // A socket event names no source port: it goes with the next connection of the flow that opens.
  let pending: TraceStep[] = [];
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  for (const raw of complete.split('\n')) {
    const ev = eventOf(raw.trim());
    if (!ev || ev.protocol !== flow.protocol) continue;
    if ('sock' in ev) {
      if (same(ev.dst, service) || isBackend(ev.dst)) pending.push(ev.sock);
      continue;
    }
    if (flow.client !== null && ev.src.ip !== flow.client) continue;
    const key = `${ev.protocol}/${label(ev.src)}`;
    // A connection's first packets only (`state new`): the rest of it, and replies, say nothing new.
    if (!ev.opens) continue;
    let conn = conns.get(key);
    if (!conn) {
      if (!same(ev.dst, service) && !isBackend(ev.dst)) continue;
      const atConnect = !same(ev.dst, service);
      conn = {
        id: ev.hash ?? key,
        protocol: ev.protocol,
        from: ev.src,
        to: service,
        rewrittenTo: atConnect ? ev.dst : null,
        rewriteAt: atConnect ? 'connect' : undefined,
        steps: pending,
        verdict: 'accept',
      };
      pending = [];
      conns.set(key, conn);
    } else if (!same(ev.dst, service) && !same(ev.dst, conn.rewrittenTo ?? service)) {
      // Seen again elsewhere: translated here (per packet), unless it already was (a new connection reusing the port).
      if (conn.rewrittenTo) continue;
      conn.rewrittenTo = ev.dst;
    }
    if (!conn.rewriteAt && conn.rewrittenTo) conn.rewriteAt = 'packet';
    conn.steps.push(ev.step);
    if (ev.drop) conn.verdict = 'drop';
  }
  return [...conns.values()];
}
