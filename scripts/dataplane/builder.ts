// Groups frontends into Service ports the same way for every parser, and checks the invariants
// (shares sum to 1, no duplicate frontend) before a model leaves a parser.
import type { Backend, DataplaneModel, Format, Frontend, FrontendType, ServicePort } from './model.ts';
import { SHARE_EPSILON } from './model.ts';

export class ModelBuilder {
  private readonly ports = new Map<string, ServicePort>();

  constructor(private readonly format: Format) {}

  add(service: string | null, portName: string | null, frontend: Frontend): void {
    // Unnamed frontends (IPVS without names) stay one per frontend: nothing says which belong together.
    const key = service === null ? `?${frontend.protocol}/${frontend.ip}:${frontend.port}` : `${service}:${portName ?? ''}`;
    let port = this.ports.get(key);
    if (!port) {
      port = { service, portName, frontends: [] };
      this.ports.set(key, port);
    }
    port.frontends.push(frontend);
  }

  /** The Service ports gathered so far, for parsers that adjust frontends after seeing them all. */
  peek(): ServicePort[] {
    return [...this.ports.values()];
  }

  build(entries: number, entriesLabel: string, counts: Record<string, number>): DataplaneModel {
    const services = [...this.ports.values()].sort(byName);
    for (const sp of services) {
      sp.frontends.sort(byFrontend);
      for (const fe of sp.frontends) assertShares(fe);
    }
    return { format: this.format, services, entries, entriesLabel, counts };
  }
}

export function backendsWithShares(list: Array<Omit<Backend, 'share'>>, shares: number[]): Backend[] {
  return list.map((b, i) => ({ ...b, share: shares[i] ?? 0 }));
}

function assertShares(fe: Frontend): void {
  if (fe.backends.length === 0) return;
  const total = fe.backends.reduce((a, b) => a + b.share, 0);
  if (Math.abs(total - 1) > SHARE_EPSILON) {
    // A bug in a parser, not bad input: fail loudly rather than show wrong percentages.
    throw new Error(`internal: shares of ${fe.ip}:${fe.port} sum to ${total}`);
  }
}

/** Frontends of one Service port in this order; `unknown` (a ClusterIP or an external address, the dump cannot say) among the addresses. */
const TYPE_ORDER: Record<FrontendType, number> = {
  ClusterIP: 0,
  ExternalIP: 1,
  LoadBalancer: 2,
  unknown: 3,
  NodePort: 4,
  HostPort: 5,
  LocalRedirect: 6,
};

function byName(a: ServicePort, b: ServicePort): number {
  const an = a.service ?? '~';
  const bn = b.service ?? '~';
  if (an !== bn) return an < bn ? -1 : 1;
  const ap = a.portName ?? '';
  const bp = b.portName ?? '';
  if (ap !== bp) return ap < bp ? -1 : 1;
  return byFrontend(a.frontends[0], b.frontends[0]);
}

function byFrontend(a: Frontend | undefined, b: Frontend | undefined): number {
  if (!a || !b) return 0;
  const t = TYPE_ORDER[a.type] - TYPE_ORDER[b.type];
  if (t !== 0) return t;
  if (a.ip !== b.ip) return a.ip < b.ip ? -1 : 1;
  if (a.port !== b.port) return a.port - b.port;
  return a.protocol < b.protocol ? -1 : a.protocol > b.protocol ? 1 : 0;
}
