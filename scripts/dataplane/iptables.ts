// kube-proxy's iptables mode, read back from iptables-save: KUBE-SERVICES / KUBE-NODEPORTS name the
// frontends, KUBE-SVC/SVL chains choose an endpoint by chained probabilities, KUBE-SEP chains DNAT.
// The filter table (when present) tells which frontends reject or drop for want of endpoints.
import { parsePort, splitServicePortName, stripHostMask, toProtocol, isIpv4 } from './addr.ts';
import { ModelBuilder } from './builder.ts';
import { frontendOf, type Chooser, type Resolved } from './chain-route.ts';
import type { Affinity, Backend, DataplaneModel, ExternalChain, ExternalRule, Frontend, FrontendType, Protocol } from './model.ts';
import { ANY_NODE_IP } from './model.ts';
import { ParseError } from './parse-error.ts';
import { chainedShares } from './shares.ts';
import { readIptablesSave, type IptChain, type IptRules, type IptTable } from './iptables-save-reader.ts';

const CHOOSER: Chooser = { random: 'statistic random', affinity: 'recent (affinity)' };

const SERVICES = 'KUBE-SERVICES';
const NODEPORTS = 'KUBE-NODEPORTS';
const EXTERNAL_SERVICES = 'KUBE-EXTERNAL-SERVICES';
/** Filter chain where kube-proxy drops load-balancer traffic its KUBE-FW- chain did not let through. */
const PROXY_FIREWALL = 'KUBE-PROXY-FIREWALL';
const FRONTEND_TARGET = /^KUBE-(SVC|SVL|EXT|FW)-/;
const POLICY_CHAIN = /^KUBE-(SVC|SVL)-/;
/** kube-proxy's chain that marks a packet for masquerading in KUBE-POSTROUTING. */
const MARK_MASQ = 'KUBE-MARK-MASQ';
const ENDPOINT_PREFIX = 'KUBE-SEP-';
const LOCALHOST_NET = '127.0.0.0/8';

/** What the end of a frontend rule's comment ("ns/svc:port cluster IP") says it is. */
const COMMENT_SUFFIX: ReadonlyArray<[suffix: string, type: FrontendType]> = [
  [' cluster IP', 'ClusterIP'],
  [' external IP', 'ExternalIP'],
  [' loadbalancer IP', 'LoadBalancer'],
];
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
  const rs = save.rules;
  const walker = new ChainWalker(rs);
  const frontends = new Map<string, { service: string | null; portName: string | null; fe: Frontend }>();
  const put = (service: string | null, portName: string | null, fe: Frontend) => frontends.set(frontendKey(fe), { service, portName, fe });

  for (const rule of nat.chain(SERVICES)?.rules ?? []) {
    const target = rs.target(rule);
    if (!target || !FRONTEND_TARGET.test(target)) continue;
    const dst = rs.opt(rule, '-d');
    const port = dportOf(rs, rule);
    if (!dst || port === null) throw new ParseError('service rule without destination and port', rs.line(rule), rs.lineText(rule));
    const named = describeComment(rs, rule);
    const type = named.type ?? typeFromTarget(target);
    const resolved = walker.resolve(target, rule);
    put(named.service, named.portName, frontendOf(CHOOSER, type, stripHostMask(dst), port, protocolOf(rs, rule), resolved, [SERVICES]));
  }

  for (const rule of nat.chain(NODEPORTS)?.rules ?? []) {
    const target = rs.target(rule);
    if (!target || !FRONTEND_TARGET.test(target)) continue;
    // kube-proxy repeats each NodePort for 127.0.0.0/8 (with an nfacct counter); same frontend.
    if (rs.opt(rule, '-d') === LOCALHOST_NET) continue;
    const port = dportOf(rs, rule);
    if (port === null) throw new ParseError('NodePort rule without --dport', rs.line(rule), rs.lineText(rule));
    const named = splitServicePortName(commentOf(rs, rule) ?? '');
    const resolved = walker.resolve(target, rule);
    put(
      named?.service ?? null,
      named?.portName ?? null,
      frontendOf(CHOOSER, 'NodePort', ANY_NODE_IP, port, protocolOf(rs, rule), resolved, [SERVICES, NODEPORTS]),
    );
  }

  const filter = save.tables.get('filter');
  if (filter) applyFilterVerdicts(filter, rs, frontends, put);

  const builder = new ModelBuilder('iptables-save');
  for (const { service, portName, fe } of frontends.values()) builder.add(service, portName, fe);
  let chains = 0;
  let serviceChains = 0;
  let endpointChains = 0;
  for (const t of save.tables.values()) {
    for (const { name: c } of t.chains) {
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

  constructor(private readonly rs: IptRules) {}

  /** Where rule `from`'s jump to `chain` (its target) leads. */
  resolve(chain: string, from: number): Resolved {
    const hit = this.cache.get(chain);
    if (hit) return hit;
    const { rules } = this.jumpOf(chain, from);
    let resolved: Resolved;
    if (chain.startsWith('KUBE-FW-')) resolved = this.firewall(chain, rules);
    else if (chain.startsWith('KUBE-EXT-')) resolved = this.external(chain, rules);
    else resolved = this.policy(chain, rules);
    this.cache.set(chain, resolved);
    return resolved;
  }

  /** The nat chain rule `from` jumps to: `chain`, its target, which the reader has already looked up. */
  private jumpOf(chain: string, from: number): IptChain {
    const c = this.rs.targetChain(from);
    if (!c) throw new ParseError(`jump to undeclared chain ${chain}`, this.rs.line(from), this.rs.lineText(from));
    return c;
  }

  /**
   * loadBalancerSourceRanges: one rule per allowed range (or per node IP, for hairpin traffic)
   * jumps on to the EXT chain; the rest falls through and KUBE-PROXY-FIREWALL (filter) drops it.
   */
  private firewall(chain: string, rules: number[]): Resolved {
    const rs = this.rs;
    const onward = rules.filter((r) => rs.target(r)?.startsWith('KUBE-EXT-'));
    const sourceRanges = onward.flatMap((r) => (rs.has(r, '-s') ? [stripHostMask(rs.opt(r, '-s') as string)] : []));
    const first = onward.length > 0 ? onward[0] : -1;
    const target = first < 0 ? null : rs.target(first);
    if (!target) return { backends: [], affinity: null, localOnly: false, path: [chain], sourceRanges };
    const next = this.resolve(target, first);
    return { ...next, path: [chain, ...next.path], sourceRanges };
  }

  /** NodePort / external IP traffic: short-circuits for pod and host traffic, then the policy chain. */
  private external(chain: string, rules: number[]): Resolved {
    const rs = this.rs;
    const isPolicy = (r: number) => {
      const target = rs.target(r);
      return target !== null && POLICY_CHAIN.test(target);
    };
    const shortCircuits = rules.some((r) => rs.has(r, '--src-type') || (rs.has(r, '-s') && isPolicy(r)));
    let final = -1;
    for (let k = rules.length - 1; k >= 0 && final < 0; k--) {
      const r = rules[k];
      if (isPolicy(r) && !rs.has(r, '-s') && !rs.has(r, '--src-type')) final = r;
    }
    const target = final < 0 ? null : rs.target(final);
    const localOnly = shortCircuits || Boolean(target?.startsWith('KUBE-SVL-'));
    const external: ExternalChain = { chain, rules: rules.filter((r) => r !== final).flatMap((r) => this.externalRule(r)) };
    if (!target) return { backends: [], affinity: null, localOnly, path: [chain], external };
    const next = this.resolve(target, final);
    return { ...next, localOnly: localOnly || next.localOnly, path: [chain, ...next.path], external };
  }

  /**
   * A rule of a KUBE-EXT chain besides its last jump: the masquerade mark (`-j KUBE-MARK-MASQ`, for
   * every packet under Cluster, for the node's own under Local) or a short-circuit to the Cluster
   * chain (`-s <pod range>`, `--src-type LOCAL`). Rules of another shape are left out.
   */
  private externalRule(r: number): ExternalRule[] {
    const rs = this.rs;
    const target = rs.target(r);
    if (!target) return [];
    const action = target === MARK_MASQ ? 'masquerade' : POLICY_CHAIN.test(target) ? 'jump' : null;
    if (!action) return [];
    const srcType = rs.opt(r, '--src-type');
    // How kube-proxy tells a pod's packets (its local-traffic detector): the pod range, or the pods' interfaces.
    const from = ['-s', '-i'].find((o) => rs.has(r, o));
    const traffic = srcType === 'LOCAL' ? 'node' : action === 'jump' || from ? 'pods' : 'all';
    const match = srcType ? `--src-type ${srcType}` : from ? `${rs.negated(r, from) ? '! ' : ''}${from} ${rs.opt(r, from)}` : '';
    return [{ traffic, action, target, match, comment: commentOf(rs, r) }];
  }

  /** KUBE-SVC / KUBE-SVL: optional affinity checks, then one probabilistic rule per endpoint. */
  private policy(chain: string, rules: number[]): Resolved {
    const rs = this.rs;
    let affinity: Affinity | null = null;
    const picks: number[] = [];
    const written: Array<string | undefined> = [];
    const probabilities: Array<number | null> = [];
    for (const r of rules) {
      const target = rs.target(r);
      if (!target || !target.startsWith(ENDPOINT_PREFIX)) continue;
      if (rs.has(r, '--rcheck')) {
        const seconds = Number(rs.opt(r, '--seconds'));
        if (!Number.isFinite(seconds)) throw new ParseError('affinity check without --seconds', rs.line(r), rs.lineText(r));
        affinity = { timeoutSeconds: seconds };
        continue;
      }
      const p = rs.opt(r, '--probability');
      const probability = p === undefined ? null : Number(p);
      if (probability !== null && !(probability >= 0 && probability <= 1))
        throw new ParseError('bad --probability', rs.line(r), rs.lineText(r));
      picks.push(r);
      written.push(p);
      probabilities.push(probability);
    }
    const shares = chainedShares(probabilities);
    const backends: Backend[] = picks.map((rule, i) => {
      const via = rs.target(rule) as string;
      const { ip, port } = this.dnatOf(via, rule);
      const p = written[i];
      return { ip, port, via, detail: p === undefined ? 'always (last rule)' : `probability ${p}`, share: shares[i] ?? 0 };
    });
    return { backends, affinity, localOnly: chain.startsWith('KUBE-SVL-'), path: [chain] };
  }

  private dnatOf(sep: string, from: number): { ip: string; port: number } {
    const rs = this.rs;
    const chain = this.jumpOf(sep, from);
    const dnat = chain.rules.find((r) => rs.target(r) === 'DNAT');
    const dest = dnat === undefined ? undefined : rs.opt(dnat, '--to-destination');
    if (dnat === undefined || !dest) throw new ParseError(`${sep} has no DNAT rule`, chain.line, sep);
    const colon = dest.lastIndexOf(':');
    const ip = dest.slice(0, colon);
    const port = colon > 0 ? parsePort(dest.slice(colon + 1)) : null;
    if (port === null || !isIpv4(ip)) throw new ParseError('bad --to-destination', rs.line(dnat), rs.lineText(dnat));
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
  rs: IptRules,
  frontends: Map<string, { service: string | null; portName: string | null; fe: Frontend }>,
  put: (service: string | null, portName: string | null, fe: Frontend) => void,
): void {
  for (const chainName of [SERVICES, EXTERNAL_SERVICES]) {
    for (const rule of filter.chain(chainName)?.rules ?? []) {
      const comment = commentOf(rs, rule);
      const m = comment ? NO_ENDPOINTS.exec(comment) : null;
      const target = rs.target(rule);
      if (!comment || !m || (target !== 'REJECT' && target !== 'DROP')) continue;
      const port = dportOf(rs, rule);
      if (port === null) throw new ParseError('no-endpoints rule without --dport', rs.line(rule), rs.lineText(rule));
      const named = splitServicePortName(comment.slice(0, m.index));
      const dst = rs.opt(rule, '-d');
      const candidates: FrontendType[] = chainName === SERVICES ? ['ClusterIP'] : dst ? ['LoadBalancer', 'ExternalIP'] : ['NodePort'];
      const ip = dst ? stripHostMask(dst) : ANY_NODE_IP;
      const protocol = protocolOf(rs, rule);
      const existing = candidates.map((type) => frontends.get(frontendKey({ type, ip, port, protocol }))).find(Boolean);
      const fe = existing?.fe ?? frontendOf(CHOOSER, candidates.at(-1) as FrontendType, ip, port, protocol, noRoute(), []);
      if (!existing && candidates.length > 1) fe.chooser = 'none (external IP or load-balancer IP: the filter rule does not say which)';
      const local = Boolean(m[1]);
      fe.noBackendVerdict = target === 'DROP' ? 'drop' : 'reject';
      if (local) {
        fe.localOnly = true;
        fe.dropsWithoutLocalEndpoints = fe.backends.length === 0;
      }
      fe.path = [...fe.path.filter((p) => p !== `${chainName} (filter)`), `${chainName} (filter)`];
      if (!existing) put(named?.service ?? null, named?.portName ?? null, fe);
    }
  }
  // "ns/svc:port traffic not accepted by KUBE-FW-…": the load balancer's fall-through is dropped here.
  for (const rule of filter.chain(PROXY_FIREWALL)?.rules ?? []) {
    const dst = rs.opt(rule, '-d');
    const port = dportOf(rs, rule);
    if (!dst || port === null || rs.target(rule) !== 'DROP') continue;
    const hit = frontends.get(frontendKey({ type: 'LoadBalancer', ip: stripHostMask(dst), port, protocol: protocolOf(rs, rule) }));
    if (hit && !hit.fe.path.includes(`${PROXY_FIREWALL} (filter)`)) hit.fe.path = [...hit.fe.path, `${PROXY_FIREWALL} (filter)`];
  }
}

function noRoute(): Resolved {
  return { backends: [], affinity: null, localOnly: false, path: [] };
}

function describeComment(rs: IptRules, rule: number): { service: string | null; portName: string | null; type: FrontendType | null } {
  const comment = commentOf(rs, rule);
  if (comment) {
    for (const [suffix, type] of COMMENT_SUFFIX) {
      if (comment.endsWith(suffix)) {
        const named = splitServicePortName(comment.slice(0, -suffix.length));
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

function commentOf(rs: IptRules, rule: number): string | null {
  return rs.opt(rule, '--comment') ?? null;
}

function dportOf(rs: IptRules, rule: number): number | null {
  const v = rs.opt(rule, '--dport');
  return v === undefined ? null : parsePort(v);
}

function protocolOf(rs: IptRules, rule: number): Protocol {
  const p = rs.opt(rule, '-p');
  const protocol = p ? toProtocol(p) : null;
  if (!protocol) throw new ParseError('service rule without -p tcp|udp|sctp', rs.line(rule), rs.lineText(rule));
  return protocol;
}

function frontendKey(fe: Pick<Frontend, 'type' | 'protocol' | 'ip' | 'port'>): string {
  return `${fe.type}|${fe.protocol}|${fe.ip}:${fe.port}`;
}

function countRules(t: IptTable): number {
  let n = 0;
  for (const c of t.chains) n += c.rules.length;
  return n;
}
