// kube-proxy's nftables mode, read from `nft -j list table ip kube-proxy`: the service-ips and
// service-nodeports verdict maps name the frontends, per-Service chains pick an endpoint chain
// with `numgen random mod n`, endpoint chains DNAT. Names follow pkg/proxy/nftables/proxier.go.
import { isIpv4, splitServicePortName, toProtocol } from './addr.ts';
import { backendsWithShares, ModelBuilder } from './builder.ts';
import { frontendOf, type Chooser, type Resolved } from './chain-route.ts';
import { isRecord, parseJsonInput } from './json-input.ts';
import type { Affinity, DataplaneModel, ExternalChain, ExternalRule, Frontend, FrontendType, Protocol } from './model.ts';
import { ANY_NODE_IP } from './model.ts';
import { ParseError } from './parse-error.ts';
import { weightedShares } from './shares.ts';

const CHOOSER: Chooser = { random: 'numgen random', affinity: 'affinity set' };

const TABLE = 'kube-proxy';
const SERVICE_IPS = 'service-ips';
const SERVICE_NODEPORTS = 'service-nodeports';
const NO_ENDPOINT_SERVICES = 'no-endpoint-services';
const NO_ENDPOINT_NODEPORTS = 'no-endpoint-nodeports';
const CLUSTER_IPS = 'cluster-ips';
const REJECT_CHAIN = 'reject-chain';
const FIREWALL_IPS = 'firewall-ips';
// "service-HASH-ns/name/proto/port", "endpoint-HASH-ns/name/proto/port__ip/port"
const CHAIN_NAME = /^(service|local|external|endpoint|firewall)-[A-Z2-7]{8}-([^/]+)\/([^/]+)\/([a-z]+)\/([^_/]*)/;

type Expr = Record<string, unknown>;
interface NftRule {
  chain: string;
  expr: Expr[];
  comment: string | null;
}
interface NftMap {
  name: string;
  elems: Array<[unknown, unknown]>;
}
export function parseNftJson(text: string): DataplaneModel {
  const root = parseJsonInput(text, 'nft -j output');
  const objects = isRecord(root) && Array.isArray(root.nftables) ? root.nftables : null;
  if (!objects) throw new ParseError('not `nft -j` output: no top-level "nftables" array', 1, text.split('\n')[0] ?? '');
  const t = readTable(objects);
  const walker = new Walker(t);
  const fronts = new Map<string, { service: string | null; portName: string | null; fe: Frontend }>();

  for (const [key, verdict] of t.maps.get(SERVICE_IPS)?.elems ?? []) {
    const k = keyParts(key, 3);
    const target = verdictTarget(verdict);
    if (!target) throw bad(`${SERVICE_IPS} element without goto/jump`, verdict);
    const type: FrontendType = target.startsWith('external-') ? 'ExternalIP' : 'ClusterIP';
    const r = walker.resolve(target);
    add(fronts, target, frontendOf(CHOOSER, type, k.ip, k.port, k.protocol, r, ['services', `@${SERVICE_IPS}`]));
  }
  for (const [key, verdict] of t.maps.get(SERVICE_NODEPORTS)?.elems ?? []) {
    const k = keyParts(key, 2);
    const target = verdictTarget(verdict);
    if (!target) throw bad(`${SERVICE_NODEPORTS} element without goto/jump`, verdict);
    add(
      fronts,
      target,
      frontendOf(CHOOSER, 'NodePort', ANY_NODE_IP, k.port, k.protocol, walker.resolve(target), ['services', `@${SERVICE_NODEPORTS}`]),
    );
  }
  for (const [mapName, width] of [
    [NO_ENDPOINT_SERVICES, 3],
    [NO_ENDPOINT_NODEPORTS, 2],
  ] as const) {
    for (const [key, verdict] of t.maps.get(mapName)?.elems ?? []) {
      const k = keyParts(key, width);
      const rejects = verdictTarget(verdict) === REJECT_CHAIN;
      const drops = isRecord(verdict) && 'drop' in verdict;
      if (!rejects && !drops) throw bad(`${mapName} element is neither drop nor goto ${REJECT_CHAIN}`, verdict);
      const type: FrontendType = width === 2 ? 'NodePort' : t.clusterIPs.has(k.ip) ? 'ClusterIP' : 'ExternalIP';
      const empty: Resolved = { backends: [], affinity: null, localOnly: false, path: [] };
      const probe = frontendOf(CHOOSER, type, k.ip, k.port, k.protocol, empty, ['filter', `@${mapName}`]);
      const existing = fronts.get(frontKey(probe));
      const fe = existing?.fe ?? probe;
      // Not translated on the way in (the external chain had no last jump), the packet meets this map in the filter chains.
      if (existing) fe.path = [...fe.path.filter((p) => p !== `@${mapName} (filter)`), `@${mapName} (filter)`];
      fe.noBackendVerdict = drops ? 'drop' : 'reject';
      if (drops) {
        // kube-proxy only drops (rather than rejects) when Local policy finds no local endpoint.
        fe.localOnly = true;
        fe.dropsWithoutLocalEndpoints = fe.backends.length === 0;
      }
      if (!existing) {
        const named = splitServicePortName(k.comment ?? '');
        fronts.set(frontKey(fe), { service: named?.service ?? null, portName: named?.portName ?? null, fe });
      }
    }
  }

  applyFirewall(t, fronts);

  const builder = new ModelBuilder('nft-json');
  for (const { service, portName, fe } of fronts.values()) builder.add(service, portName, fe);
  const elements = [...t.maps.values()].reduce((n, m) => n + m.elems.length, 0);
  return builder.build(t.ruleCount + elements, 'rules + map elements', {
    rules: t.ruleCount,
    chains: t.chains.size,
    maps: t.maps.size,
    mapElements: elements,
    sets: t.setTimeouts.size,
  });
}

/**
 * service-ips sends external IPs and load-balancer IPs alike to the external- chain, so nft output
 * cannot tell them apart, except that only load-balancer IPs have loadBalancerSourceRanges: an
 * address in firewall-ips is a LoadBalancer, and its firewall- chain (`ip saddr != { … } drop`)
 * names the sources let through. Every other external address stays "ExternalIP".
 */
function applyFirewall(t: Table, fronts: Map<string, { service: string | null; portName: string | null; fe: Frontend }>): void {
  for (const [key, verdict] of t.maps.get(FIREWALL_IPS)?.elems ?? []) {
    const k = keyParts(key, 3);
    const chain = verdictTarget(verdict);
    const oldKey = `ExternalIP|${k.protocol}|${k.ip}:${k.port}`;
    const hit = fronts.get(oldKey);
    if (!hit) continue;
    fronts.delete(oldKey);
    hit.fe.type = 'LoadBalancer';
    hit.fe.path = ['filter', `@${FIREWALL_IPS}`, ...(chain ? [chain] : []), ...hit.fe.path];
    const ranges = chain ? allowedSources(t.chains.get(chain) ?? []) : [];
    if (ranges.length) hit.fe.sourceRanges = ranges;
    fronts.set(frontKey(hit.fe), hit);
  }
}

/** `ip saddr != { 203.0.113.0/25 } drop` → ["203.0.113.0/25"]. */
function allowedSources(rules: NftRule[]): string[] {
  const out: string[] = [];
  for (const r of rules) {
    for (const e of r.expr) {
      const m = e.match;
      if (!isRecord(m) || m.op !== '!=' || !isRecord(m.left) || !isRecord(m.left.payload) || m.left.payload.field !== 'saddr') continue;
      const right = isRecord(m.right) && Array.isArray(m.right.set) ? m.right.set : [m.right];
      for (const v of right) {
        if (typeof v === 'string') out.push(v);
        else if (isRecord(v) && isRecord(v.prefix) && typeof v.prefix.addr === 'string') out.push(`${v.prefix.addr}/${v.prefix.len}`);
      }
    }
  }
  return out;
}

function readTable(objects: unknown[]) {
  const chains = new Map<string, NftRule[]>();
  const maps = new Map<string, NftMap>();
  const setTimeouts = new Map<string, number | null>();
  const clusterIPs = new Set<string>();
  let sawTable = false;
  let ruleCount = 0;
  for (const obj of objects) {
    if (!isRecord(obj)) throw bad('nftables entry is not an object', obj);
    const [kind, body] = Object.entries(obj)[0] ?? [];
    if (kind === 'metainfo') continue;
    if (!isRecord(body)) throw bad(`${kind} entry has no body`, obj);
    if (body.table !== TABLE && !(kind === 'table' && body.name === TABLE)) continue;
    if (kind === 'table') sawTable = true;
    else if (kind === 'chain') {
      if (typeof body.name !== 'string') throw bad('chain without name', obj);
      if (!chains.has(body.name)) chains.set(body.name, []);
    } else if (kind === 'rule') {
      if (typeof body.chain !== 'string' || !Array.isArray(body.expr)) throw bad('rule without chain or expr', obj);
      const list = chains.get(body.chain) ?? [];
      chains.set(body.chain, list);
      list.push({ chain: body.chain, expr: body.expr.filter(isRecord), comment: typeof body.comment === 'string' ? body.comment : null });
      ruleCount++;
    } else if (kind === 'map') {
      if (typeof body.name !== 'string') throw bad('map without name', obj);
      const elems = Array.isArray(body.elem) ? body.elem : [];
      for (const e of elems) if (!Array.isArray(e) || e.length !== 2) throw bad(`element of map ${body.name} is not [key, verdict]`, e);
      maps.set(body.name, { name: body.name, elems: elems as Array<[unknown, unknown]> });
    } else if (kind === 'set') {
      if (typeof body.name !== 'string') throw bad('set without name', obj);
      setTimeouts.set(body.name, typeof body.timeout === 'number' ? body.timeout : null);
      if (body.name === CLUSTER_IPS && Array.isArray(body.elem)) for (const e of body.elem) if (typeof e === 'string') clusterIPs.add(e);
    }
  }
  if (!sawTable) throw new ParseError(`no "table ip ${TABLE}" in the input: run \`nft -j list table ip ${TABLE}\``, 1, '');
  return { chains, maps, setTimeouts, clusterIPs, ruleCount };
}

type Table = ReturnType<typeof readTable>;

class Walker {
  private readonly cache = new Map<string, Resolved>();
  constructor(private readonly t: Table) {}

  resolve(chain: string): Resolved {
    const hit = this.cache.get(chain);
    if (hit) return hit;
    const rules = this.t.chains.get(chain);
    if (!rules) throw new ParseError(`verdict points at missing chain ${chain}`, 1, chain);
    const r = chain.startsWith('external-') ? this.external(chain, rules) : this.policy(chain, rules);
    this.cache.set(chain, r);
    return r;
  }

  /** Short-circuit rules (pod / host traffic) then a bare goto to the policy chain, if any endpoint is usable. */
  private external(chain: string, rules: NftRule[]): Resolved {
    const final = [...rules].reverse().find((r) => r.expr.length === 1 && verdictTarget(r.expr[0]));
    const target = final ? verdictTarget(final.expr[0]) : null;
    const shortCircuits = rules.some((r) => r.expr.some((e) => JSON.stringify(e).includes('"fib"')));
    const localOnly = shortCircuits || Boolean(target?.startsWith('local-'));
    const external: ExternalChain = { chain, rules: rules.filter((r) => r !== final).flatMap(externalRule) };
    if (!target || !/^(service|local)-/.test(target)) return { backends: [], affinity: null, localOnly, path: [chain], external };
    const next = this.resolve(target);
    return { ...next, localOnly: localOnly || next.localOnly, path: [chain, ...next.path], external };
  }

  /** Affinity lookups, then `numgen random mod n vmap { i : goto endpoint-… }`. */
  private policy(chain: string, rules: NftRule[]): Resolved {
    let affinity: Affinity | null = null;
    let picks: Array<{ slot: string; target: string }> = [];
    let mod = 0;
    for (const rule of rules) {
      for (const e of rule.expr) {
        const set = affinitySetOf(e);
        if (set) {
          const timeout = this.t.setTimeouts.get(set);
          if (timeout === undefined) throw new ParseError(`affinity set ${set} is missing`, 1, set);
          if (timeout !== null) affinity = { timeoutSeconds: timeout };
        }
        const vmap = numgenOf(e);
        if (vmap) ({ mod, picks } = vmap);
      }
      if (!picks.length && rule.expr.length === 1) {
        const only = verdictTarget(rule.expr[0]);
        if (only?.startsWith('endpoint-')) picks = [{ slot: 'always', target: only }];
      }
    }
    const list = picks.map((p) => ({
      ...this.dnatOf(p.target),
      via: p.target,
      detail: mod ? `numgen slot ${p.slot} of ${mod}` : 'only endpoint',
    }));
    const backends = backendsWithShares(list, weightedShares(picks.map(() => 1)));
    return { backends, affinity, localOnly: chain.startsWith('local-'), path: [chain] };
  }

  private dnatOf(chain: string): { ip: string; port: number } {
    const rules = this.t.chains.get(chain);
    if (!rules) throw new ParseError(`numgen map points at missing chain ${chain}`, 1, chain);
    for (const r of rules) {
      for (const e of r.expr) {
        const d = e.dnat;
        if (isRecord(d) && typeof d.addr === 'string' && typeof d.port === 'number' && isIpv4(d.addr)) return { ip: d.addr, port: d.port };
      }
    }
    throw new ParseError(`endpoint chain ${chain} has no dnat rule`, 1, chain);
  }
}

const MARK_MASQ = 'mark-for-masquerade';

/**
 * A rule of an external- chain besides its last goto: `jump mark-for-masquerade` (every packet
 * under Cluster; after `fib saddr type local` under Local) or a short-circuit to the service-
 * chain (`ip saddr <pod range>`, `fib saddr type local`). Rules of another shape are left out.
 */
function externalRule(rule: NftRule): ExternalRule[] {
  const target = rule.expr.map(verdictTarget).find((t) => t !== null) ?? null;
  if (!target) return [];
  const action = target === MARK_MASQ ? 'masquerade' : /^service-/.test(target) ? 'jump' : null;
  if (!action) return [];
  const matches = rule.expr.flatMap((e) => (isRecord(e.match) ? [e.match] : []));
  const node = matches.some((m) => isRecord(m.left) && isRecord(m.left.fib));
  const match = matches.map(describeMatch).join(' ');
  const traffic = node ? 'node' : action === 'jump' || matches.length ? 'pods' : 'all';
  return [{ traffic, action, target, match, comment: rule.comment }];
}

/** A match as `nft list` prints it, for the kinds an external chain holds; anything else in JSON. */
function describeMatch(m: Record<string, unknown>): string {
  const op = m.op === '==' || m.op === undefined ? '' : `${String(m.op)} `;
  const right = isRecord(m.right) && isRecord(m.right.prefix) ? `${String(m.right.prefix.addr)}/${String(m.right.prefix.len)}` : m.right;
  const left = isRecord(m.left) ? m.left : {};
  if (isRecord(left.payload)) return `${String(left.payload.protocol)} ${String(left.payload.field)} ${op}${String(right)}`;
  if (isRecord(left.fib)) {
    const flags = Array.isArray(left.fib.flags) ? left.fib.flags.join(' . ') : '';
    return `fib ${flags} ${String(left.fib.result)} ${op}${String(right)}`;
  }
  if (isRecord(left.meta)) return `${String(left.meta.key)} ${op}${String(right)}`;
  return JSON.stringify(m);
}

function affinitySetOf(e: Expr): string | null {
  const m = e.match;
  if (!isRecord(m) || typeof m.right !== 'string' || !m.right.startsWith('@affinity-')) return null;
  return m.right.slice(1);
}

function numgenOf(e: Expr): { mod: number; picks: Array<{ slot: string; target: string }> } | null {
  const v = e.vmap;
  if (!isRecord(v) || !isRecord(v.key) || !isRecord(v.key.numgen) || !isRecord(v.data) || !Array.isArray(v.data.set)) return null;
  const mod = Number(v.key.numgen.mod);
  const picks = v.data.set.map((pair: unknown) => {
    const target = Array.isArray(pair) ? verdictTarget(pair[1]) : null;
    if (!Array.isArray(pair) || !target) throw bad('numgen vmap entry is not [slot, goto chain]', pair);
    return { slot: String(pair[0]), target };
  });
  return { mod, picks };
}

function verdictTarget(v: unknown): string | null {
  if (!isRecord(v)) return null;
  for (const kind of ['goto', 'jump']) {
    const body = v[kind];
    if (isRecord(body) && typeof body.target === 'string') return body.target;
  }
  return null;
}

/** Map keys are {"concat": [...]} or, with an element comment, {"elem": {"val": {"concat": …}, "comment"}}. */
function keyParts(key: unknown, width: 2 | 3): { ip: string; protocol: Protocol; port: number; comment: string | null } {
  let comment: string | null = null;
  let k = key;
  if (isRecord(k) && isRecord(k.elem)) {
    comment = typeof k.elem.comment === 'string' ? k.elem.comment : null;
    k = k.elem.val;
  }
  const parts = isRecord(k) && Array.isArray(k.concat) ? k.concat : null;
  if (!parts || parts.length !== width) throw bad(`map key is not a ${width}-part concatenation`, key);
  const [ip, proto, port] = width === 3 ? parts : [ANY_NODE_IP, ...parts];
  const protocol = typeof proto === 'string' ? toProtocol(proto) : null;
  if (typeof ip !== 'string' || !isIpv4(ip) || !protocol || typeof port !== 'number')
    throw bad('map key is not address . protocol . port', key);
  return { ip, protocol, port, comment };
}

function add(fronts: Map<string, { service: string | null; portName: string | null; fe: Frontend }>, chain: string, fe: Frontend): void {
  const m = CHAIN_NAME.exec(chain);
  fronts.set(frontKey(fe), { service: m ? `${m[2]}/${m[3]}` : null, portName: m && m[5] ? m[5] : null, fe });
}

function frontKey(fe: Pick<Frontend, 'type' | 'protocol' | 'ip' | 'port'>): string {
  return `${fe.type}|${fe.protocol}|${fe.ip}:${fe.port}`;
}

function bad(message: string, value: unknown): ParseError {
  return new ParseError(message, 1, JSON.stringify(value) ?? String(value));
}
