// The one flow a trace follows: a protocol, the address the client connects to (a ClusterIP, or a
// node address for a NodePort) and its port, and optionally the client's own address. Checked
// here, before any of it reaches a node's command line.
import { DplabError } from '../../base/errors.ts';
import { isIpv4, parsePort } from '../addr.ts';

const TRACE_PROTOCOLS = ['tcp', 'udp', 'sctp'] as const;
type TraceProtocol = (typeof TRACE_PROTOCOLS)[number];

export interface TraceFlow {
  protocol: TraceProtocol;
  ip: string;
  port: number;
  /** Only packets from this address are traced; null: from anywhere. */
  client: string | null;
}

export function traceFlow(input: { protocol?: string; ip: string; port: number | string; client?: string | null }): TraceFlow {
  const protocol = (input.protocol ?? 'tcp').toLowerCase();
  if (!(TRACE_PROTOCOLS as readonly string[]).includes(protocol))
    throw new DplabError(`"${protocol.slice(0, 20)}" is not a protocol a Service uses (tcp, udp or sctp).`, {
      fix: 'Use tcp, udp or sctp.',
      status: 400,
    });
  if (!isIpv4(input.ip))
    throw new DplabError(`"${input.ip.slice(0, 60)}" is not an IPv4 address.`, {
      fix: 'Give the Service ClusterIP, or a node address with a NodePort (traces follow IPv4 flows).',
      status: 400,
    });
  const port = parsePort(String(input.port));
  if (port === null || port === 0) throw new DplabError(`"${String(input.port).slice(0, 20)}" is not a port.`, { status: 400 });
  const client = input.client ?? null;
  if (client !== null && !isIpv4(client)) throw new DplabError(`"${client.slice(0, 60)}" is not an IPv4 client address.`, { status: 400 });
  return { protocol: protocol as TraceProtocol, ip: input.ip, port, client };
}

export interface Address {
  ip: string;
  port: number;
}

/** What a trace looks for: the flow, and the backends the model says its frontend translates it to. */
export interface FlowTarget {
  flow: TraceFlow;
  backends: readonly Address[];
}

/** "tcp 10.96.45.112:80 from 10.244.1.5", for messages. */
export const flowLabel = (f: TraceFlow): string => `${f.protocol} ${f.ip}:${f.port}${f.client ? ` from ${f.client}` : ''}`;
