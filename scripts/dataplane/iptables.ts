// kube-proxy's iptables mode, read back from iptables-save: KUBE-SERVICES / KUBE-NODEPORTS name the
// frontends, KUBE-SVC/SVL chains choose an endpoint by chained probabilities, KUBE-SEP chains DNAT.
// The filter table (when present) tells which frontends reject or drop for want of endpoints.
import { parsePort, splitServicePortName, stripHostMask, toProtocol, isIpv4 } from './addr.ts';
import { ModelBuilder } from './builder.ts';
import { frontendOf, type Chooser, type Resolved } from './chain-route.ts';
import type { Affinity, Backend, DataplaneModel, Frontend, FrontendType, Protocol } from './model.ts';
import { ANY_NODE_IP } from './model.ts';
import { ParseError } from './parse-error.ts';
import { chainedShares } from './shares.ts';
import { readIptablesSave, type IptRule, type IptTable } from './iptables-save-reader.ts';

const CHOOSER: Chooser = { random: 'statistic random', affinity: 'recent (affinity)' };

const SERVICES = 'KUBE-SERVICES';
const NODEPORTS = 'KUBE-NODEPORTS';
const EXTERNAL_SERVICES = 'KUBE-EXTERNAL-SERVICES';
/** Filter chain where kube-proxy drops load-balancer traffic its KUBE-FW- chain did not let through. */
const PROXY_FIREWALL = 'KUBE-PROXY-FIREWALL';
const FRONTEND_TARGET = /^KUBE-(SVC|SVL|EXT|FW)-/;
const POLICY_CHAIN = /^KUBE-(SVC|SVL)-/;
const ENDPOINT_PREFIX = 'KUBE-SEP-';
const LOCALHOST_NET = '127.0.0.0/8';

const COMMENT_SUFFIX: Record<string, FrontendType> = {
  'cluster IP': 'ClusterIP',
  'external IP': 'ExternalIP',
  'loadbalancer IP': 'LoadBalancer',
};
const NO_ENDPOINTS = / has no (local )?endpoints$/;

export function parseIptablesSave(text: string): DataplaneModel {
  const save = readIptablesSave(text);
  const nat = save.tables.get('nat');
  if (!nat) {
    const first = text.split('\n').findIndex((l) => l.trim() !== '');
    throw new ParseError(
      'no *nat table: run `iptables-save` (all tables) or `iptables-save -t nat`',
      first + 1,
      text.split('\n')[first] ?? '',
    );
  }
  const walker = new ChainWalker(nat);
  const frontends = new Map<string, { service: string | null; portName: string | null; fe: Frontend }>();
  const put = (service: string | null, portName: string | null, fe: Frontend) => frontends.set(frontendKey(fe), { service, portName, fe });

  for (const rule of nat.chains.get(SERVICES)?.rules ?? []) {
    if (!rule.target || !FRONTEND_TARGET.test(rule.target)) continue;
    const dst = rule.opt('-d');
    const port = dportOf(rule);
    if (!dst || port === null) throw new ParseError('service rule without destination and port', rule.line, rule.text);
    const named = describeComment(rule);
    const type = named.type ?? typeFromTarget(rule.target);
    const resolved = walker.resolve(rule.target, rule);
    put(named.service, named.portName, frontendOf(CHOOSER, type, stripHostMask(dst), port, protocolOf(rule), resolved, [SERVICES]));
  }

  for (const rule of nat.chains.get(NODEPORTS)?.rules ?? []) {
    if (!rule.target || !FRONTEND_TARGET.test(rule.target)) continue;
    // kube-proxy repeats each NodePort for 127.0.0.0/8 (with an nfacct counter); same frontend.
    if (rule.opt('-d') === LOCALHOST_NET) continue;
    const port = dportOf(rule);
    if (port === null) throw new ParseError('NodePort rule without --dport', rule.line, rule.text);
    const named = splitServicePortName(commentOf(rule) ?? '');
    const resolved = walker.resolve(rule.target, rule);
    put(
      named?.service ?? null,
      named?.portName ?? null,
      frontendOf(CHOOSER, 'NodePort', ANY_NODE_IP, port, protocolOf(rule), resolved, [SERVICES, NODEPORTS]),
    );
  }

  const filter = save.tables.get('filter');
  if (filter) applyFilterVerdicts(filter, frontends, put);

  const builder = new ModelBuilder('iptables-save');
  for (const { service, portName, fe } of frontends.values()) builder.add(service, portName, fe);
  let chains = 0;
  let serviceChains = 0;
  let endpointChains = 0;
  for (const t of save.tables.values()) {
    for (const c of t.chains.keys()) {
      chains++;
      if (c.startsWith('KUBE-SVC-') || c.startsWith('KUBE-SVL-')) serviceChains++;
      else if (c.startsWith(ENDPOINT_PREFIX)) endpointChains++;
    }
  }
  return builder.build(save.ruleCount, 'rules', {
    rules: save.ruleCount,
    natRules: countRules(nat),
    filterRules: filter ? countRules(filter) : 0,
    chains,
    serviceChains,
    endpointChains,
  });
}

/** Follows one frontend's jump to the DNAT rules it can end in. */
class ChainWalker {
  private readonly cache = new Map<string, Resolved>();

  constructor(private readonly nat: IptTable) {}

  resolve(chain: string, from: IptRule): Resolved {
    const hit = this.cache.get(chain);
    if (hit) return hit;
    const rules = this.rulesOf(chain, from);
    let resolved: Resolved;
    if (chain.startsWith('KUBE-FW-')) resolved = this.firewall(chain, rules, from);
    else if (chain.startsWith('KUBE-EXT-')) resolved = this.external(chain, rules);
    else resolved = this.policy(chain, rules);
    this.cache.set(chain, resolved);
    return resolved;
  }

  private rulesOf(chain: string, from: IptRule): IptRule[] {
    const c = this.nat.chains.get(chain);
    if (!c) throw new ParseError(`jump to undeclared chain ${chain}`, from.line, from.text);
    return c.rules;
  }

  /**
   * loadBalancerSourceRanges: one rule per allowed range (or per node IP, for hairpin traffic)
   * jumps on to the EXT chain; the rest falls through and KUBE-PROXY-FIREWALL (filter) drops it.
   */
  private firewall(chain: string, rules: IptRule[], from: IptRule): Resolved {
    const onward = rules.filter((r) => r.target?.startsWith('KUBE-EXT-'));
    const sourceRanges = onward.flatMap((r) => (r.has('-s') ? [stripHostMask(r.opt('-s') as string)] : []));
    const first = onward[0];
    if (!first?.target) return { backends: [], affinity: null, localOnly: false, path: [chain], sourceRanges };
    const next = this.resolve(first.target, first ?? from);
    return { ...next, path: [chain, ...next.path], sourceRanges };
  }

  /** NodePort / external IP traffic: short-circuits for pod and host traffic, then the policy chain. */
  private external(chain: string, rules: IptRule[]): Resolved {
    const shortCircuits = rules.some((r) => r.has('--src-type') || (r.has('-s') && r.target && POLICY_CHAIN.test(r.target)));
    const final = [...rules].reverse().find((r) => r.target && POLICY_CHAIN.test(r.target) && !r.has('-s') && !r.has('--src-type'));
    const localOnly = shortCircuits || Boolean(final?.target?.startsWith('KUBE-SVL-'));
    if (!final?.target) return { backends: [], affinity: null, localOnly, path: [chain] };
    const next = this.resolve(final.target, final);
    return { ...next, localOnly: localOnly || next.localOnly, path: [chain, ...next.path] };
  }

  /** KUBE-SVC / KUBE-SVL: optional affinity checks, then one probabilistic rule per endpoint. */
  private policy(chain: string, rules: IptRule[]): Resolved {
    let affinity: Affinity | null = null;
    const picks: IptRule[] = [];
    const written: Array<string | undefined> = [];
    const probabilities: Array<number | null> = [];
    for (const r of rules) {
      if (!r.target || !r.target.startsWith(ENDPOINT_PREFIX)) continue;
      if (r.has('--rcheck')) {
        const seconds = Number(r.opt('--seconds'));
        if (!Number.isFinite(seconds)) throw new ParseError('affinity check without --seconds', r.line, r.text);
        affinity = { timeoutSeconds: seconds };
        continue;
      }
      const p = r.opt('--probability');
      const probability = p === undefined ? null : Number(p);
      if (probability !== null && !(probability >= 0 && probability <= 1)) throw new ParseError('bad --probability', r.line, r.text);
      picks.push(r);
      written.push(p);
      probabilities.push(probability);
    }
    const shares = chainedShares(probabilities);
    const backends: Backend[] = picks.map((rule, i) => {
      const via = rule.target as string;
      const { ip, port } = this.dnatOf(via, rule);
      const p = written[i];
      return { ip, port, via, detail: p === undefined ? 'always (last rule)' : `probability ${p}`, share: shares[i] ?? 0 };
    });
    return { backends, affinity, localOnly: chain.startsWith('KUBE-SVL-'), path: [chain] };
  }

  private dnatOf(sep: string, from: IptRule): { ip: string; port: number } {
    const rules = this.rulesOf(sep, from);
    const dnat = rules.find((r) => r.target === 'DNAT');
    const dest = dnat?.opt('--to-destination');
    if (!dnat || !dest) throw new ParseError(`${sep} has no DNAT rule`, this.nat.chains.get(sep)?.line ?? from.line, sep);
    const colon = dest.lastIndexOf(':');
    const ip = dest.slice(0, colon);
    const port = colon > 0 ? parsePort(dest.slice(colon + 1)) : null;
    if (port === null || !isIpv4(ip)) throw new ParseError('bad --to-destination', dnat.line, dnat.text);
    return { ip, port };
  }
}

/**
 * Filter-table rules: REJECT/DROP for frontends without (local) endpoints, and KUBE-PROXY-FIREWALL's
 * DROP behind a load balancer's source ranges. A rule with `-d` in KUBE-EXTERNAL-SERVICES names an
 * external IP *or* a load-balancer IP (kube-proxy writes both alike), so it is matched to the nat
 * frontend at that address whatever its type; only an address nat does not capture (no endpoints
 * at all) becomes a frontend of its own.
 */
function applyFilterVerdicts(
  filter: IptTable,
  frontends: Map<string, { service: string | null; portName: string | null; fe: Frontend }>,
  put: (service: string | null, portName: string | null, fe: Frontend) => void,
): void {
  for (const chainName of [SERVICES, EXTERNAL_SERVICES]) {
    for (const rule of filter.chains.get(chainName)?.rules ?? []) {
      const comment = commentOf(rule);
      const m = comment ? NO_ENDPOINTS.exec(comment) : null;
      if (!comment || !m || (rule.target !== 'REJECT' && rule.target !== 'DROP')) continue;
      const port = dportOf(rule);
      if (port === null) throw new ParseError('no-endpoints rule without --dport', rule.line, rule.text);
      const named = splitServicePortName(comment.slice(0, m.index));
      const dst = rule.opt('-d');
      const candidates: FrontendType[] = chainName === SERVICES ? ['ClusterIP'] : dst ? ['LoadBalancer', 'ExternalIP'] : ['NodePort'];
      const ip = dst ? stripHostMask(dst) : ANY_NODE_IP;
      const protocol = protocolOf(rule);
      const existing = candidates.map((type) => frontends.get(frontendKey({ type, ip, port, protocol }))).find(Boolean);
      const fe = existing?.fe ?? frontendOf(CHOOSER, candidates.at(-1) as FrontendType, ip, port, protocol, noRoute(), []);
      if (!existing && candidates.length > 1) fe.chooser = 'none (external IP or load-balancer IP: the filter rule does not say which)';
      const local = Boolean(m[1]);
      fe.noBackendVerdict = rule.target === 'DROP' ? 'drop' : 'reject';
      if (local) {
        fe.localOnly = true;
        fe.dropsWithoutLocalEndpoints = fe.backends.length === 0;
      }
      fe.path = [...fe.path.filter((p) => p !== `${chainName} (filter)`), `${chainName} (filter)`];
      if (!existing) put(named?.service ?? null, named?.portName ?? null, fe);
    }
  }
  // "ns/svc:port traffic not accepted by KUBE-FW-…": the load balancer's fall-through is dropped here.
  for (const rule of filter.chains.get(PROXY_FIREWALL)?.rules ?? []) {
    const dst = rule.opt('-d');
    const port = dportOf(rule);
    if (!dst || port === null || rule.target !== 'DROP') continue;
    const hit = frontends.get(frontendKey({ type: 'LoadBalancer', ip: stripHostMask(dst), port, protocol: protocolOf(rule) }));
    if (hit && !hit.fe.path.includes(`${PROXY_FIREWALL} (filter)`)) hit.fe.path = [...hit.fe.path, `${PROXY_FIREWALL} (filter)`];
  }
}

function noRoute(): Resolved {
  return { backends: [], affinity: null, localOnly: false, path: [] };
}

function describeComment(rule: IptRule): { service: string | null; portName: string | null; type: FrontendType | null } {
  const comment = commentOf(rule);
  if (comment) {
    for (const [suffix, type] of Object.entries(COMMENT_SUFFIX)) {
      if (comment.endsWith(` ${suffix}`)) {
        const named = splitServicePortName(comment.slice(0, -suffix.length - 1));
        return { service: named?.service ?? null, portName: named?.portName ?? null, type };
      }
    }
  }
  return { service: null, portName: null, type: null };
}

function typeFromTarget(target: string): FrontendType {
  if (target.startsWith('KUBE-FW-')) return 'LoadBalancer';
  if (target.startsWith('KUBE-EXT-')) return 'ExternalIP';
  return 'ClusterIP';
}

function commentOf(rule: IptRule): string | null {
  return rule.opt('--comment') ?? null;
}

function dportOf(rule: IptRule): number | null {
  const v = rule.opt('--dport');
  return v === undefined ? null : parsePort(v);
}

function protocolOf(rule: IptRule): Protocol {
  const p = rule.opt('-p');
  const protocol = p ? toProtocol(p) : null;
  if (!protocol) throw new ParseError('service rule without -p tcp|udp|sctp', rule.line, rule.text);
  return protocol;
}

function frontendKey(fe: Pick<Frontend, 'type' | 'protocol' | 'ip' | 'port'>): string {
  return `${fe.type}|${fe.protocol}|${fe.ip}:${fe.port}`;
}

function countRules(t: IptTable): number {
  let n = 0;
  for (const c of t.chains.values()) n += c.rules.length;
  return n;
}
