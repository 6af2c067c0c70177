// A throwaway "node + pods" topology in network namespaces, for sending real traffic through
// kube-proxy rules loaded from the fixtures (see traffic.test.ts). Linux, root, iproute2 only.
//
//   node namespace                                   pod namespaces (one per backend)
//   ┌───────────────────────────────────────┐        ┌──────────────────────────┐
//   │ lo up                                 │        │ lo up                    │
//   │ up0 172.18.0.3/16 ── up1 (no address) │        │ eth0 10.244.1.2/32       │
//   │   default via 172.18.0.1 dev up0      │        │   default via 10.244.1.1 │
//   │ p0 10.244.1.1/32 ─────────────────────┼─veth───┤   HTTP server on :8080   │
//   │   10.244.1.2/32 dev p0                │        └──────────────────────────┘
//   │ p1, p2 … likewise                     │
//   │ kube-proxy rules (iptables or nft)    │
//   └───────────────────────────────────────┘
//
// Pod wiring is point-to-point, as kind's kindnet / the CNI ptp plugin does it: the node side of
// every veth carries the pod subnet's gateway (.1/32, the same address may sit on several veths)
// and a /32 route to the pod. up0/up1 is a veth whose far end leads nowhere: it only gives the
// node a default route, so connect() to a ClusterIP (which no route names, on a real node either)
// gets as far as the nat OUTPUT hook. A packet the rules fail to DNAT ends there, unanswered.
import { execFile, execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TOOLS = ['ip', 'iptables-restore', 'iptables-save', 'nft'];

/** Why the real-kernel tiers cannot run here, or null when they can (`veth: false` when only rules are loaded). */
export function whyNot(opts: { veth?: boolean } = {}): string | null {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not root (ip netns add needs CAP_SYS_ADMIN)';
  const missing = TOOLS.filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
  if (missing.length) return `missing ${missing.join(', ')} (apt-get install -y iptables nftables iproute2)`;
  const a = `dplab-tr-${process.pid}-probe-a`;
  const b = `dplab-tr-${process.pid}-probe-b`;
  try {
    if (spawnSync('ip', ['netns', 'add', a]).status !== 0) return 'ip netns add is not permitted here';
    if (opts.veth === false) return null;
    if (spawnSync('ip', ['netns', 'add', b]).status !== 0) return 'ip netns add is not permitted here';
    // veth pairs across namespaces are the whole topology: make sure this kernel has them.
    const veth = spawnSync('ip', ['-n', a, 'link', 'add', 'v0', 'type', 'veth', 'peer', 'name', 'v1', 'netns', b], { encoding: 'utf8' });
    if (veth.status !== 0) return `cannot create veth pairs (${veth.stderr.trim()})`;
  } finally {
    spawnSync('ip', ['netns', 'del', a]);
    spawnSync('ip', ['netns', 'del', b]);
  }
  return null;
}

/** nft 1.0.x resolves references in file order, and `nft -j list` prints maps (with gotos) before chains. */
export function loadableNftJson(text: string): string {
  const ORDER: Record<string, number> = { table: 0, chain: 1, set: 2, map: 2, rule: 3 };
  const objects = (JSON.parse(text) as { nftables: Array<Record<string, unknown>> }).nftables.filter((o) => !('metainfo' in o));
  objects.sort((a, b) => (ORDER[Object.keys(a)[0]] ?? 9) - (ORDER[Object.keys(b)[0]] ?? 9));
  return JSON.stringify({ nftables: objects });
}

/**
 * kube-proxy's nft transactions as its unit tests print them (pkg/proxy/nftables proxier_test.go)
 * are sorted for comparison, so a rule may name a chain declared further down; `nft -f` resolves
 * in file order. Declarations (table, set, map, chain) go first, everything else keeps its order.
 */
export function loadableNftScript(text: string): string {
  const lines = text.split('\n');
  const declares = (l: string) => /^add (table|set|map|chain) /.test(l.trim());
  return [...lines.filter(declares), ...lines.filter((l) => !declares(l))].join('\n');
}

/** `--nfacct-name X` counters a rule set uses: kube-proxy creates them before writing its rules. */
export function nfacctNames(iptablesText: string): string[] {
  return [...new Set([...iptablesText.matchAll(/--nfacct-name\s+(\S+)/g)].map((m) => m[1]))];
}

export interface PodSpec {
  ip: string;
  port: number;
}
export interface Answer {
  pod: string;
  ip: string;
  port: number;
  peer: string;
}
export type Outcome = { ok: true; ms: number; answer: Answer } | { ok: false; ms: number; code: string };

// Each pod answers with its own name, its own address and the client address it saw.
const SERVER = `
const [name, ip, port] = process.argv.slice(1);
const server = require('http').createServer((req, res) => {
  res.setHeader('connection', 'close');
  res.end(JSON.stringify({ pod: name, ip, port: +port, peer: req.socket.remoteAddress }));
});
server.listen(+port, ip, () => console.log('ready'));
// Dies with its parent: stdin is a pipe from the test process.
process.stdin.on('end', () => process.exit(0)).on('error', () => process.exit(0)).resume();
`;

// Sends n requests one after another, each on a new connection, and prints one JSON line per request.
const CLIENT = `
const http = require('http');
const [host, port, n, timeoutMs, localAddress] = process.argv.slice(1);
function once() {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let done = false;
    const finish = (r) => { if (!done) { done = true; clearTimeout(timer); resolve({ ...r, ms: Date.now() - t0 }); } };
    const req = http.get({ host, port: +port, path: '/', agent: false, localAddress: localAddress || undefined }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => { try { finish({ ok: true, answer: JSON.parse(body) }); } catch { finish({ ok: false, code: 'BADBODY' }); } });
      res.on('error', (e) => finish({ ok: false, code: e.code || String(e) }));
    });
    const timer = setTimeout(() => { finish({ ok: false, code: 'TIMEOUT' }); req.destroy(); }, +timeoutMs);
    req.on('error', (e) => finish({ ok: false, code: e.code || String(e) }));
  });
}
(async () => { for (let i = 0; i < +n; i++) console.log(JSON.stringify(await once())); })();
`;

const outcomes = (out: string): Outcome[] =>
  out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Outcome);

let labCounter = 0;
// Last resort if a test run dies before afterAll: servers exit on their own when their stdin
// closes; namespaces would outlive the process, so they are deleted here.
const live = new Set<NetnsLab>();
process.once('exit', () => {
  for (const lab of [...live]) lab.deleteNamespaces();
});

export class NetnsLab {
  readonly node!: string;
  /** Namespaces in creation order (node first); all of them go in close(). */
  private readonly namespaces: string[] = [];
  private readonly servers: ChildProcess[] = [];
  private readonly scratch = mkdtempSync(join(tmpdir(), 'dplab-traffic-'));
  private podCount = 0;

  /** nodeIp: the node's own address (on up0), gateway: where its default route points. */
  constructor(
    readonly nodeIp = '172.18.0.3',
    readonly prefix = 16,
    readonly gateway = '172.18.0.1',
  ) {
    live.add(this);
    try {
      this.node = this.addNamespace();
      this.batch(this.node, [
        'link set lo up',
        'link add up0 type veth peer name up1',
        `addr add ${nodeIp}/${prefix} dev up0`,
        'link set up0 up',
        'link set up1 up',
        `route add default via ${gateway} dev up0`,
      ]);
    } catch (e) {
      this.deleteNamespaces();
      throw e;
    }
  }

  private addNamespace(): string {
    const ns = `dplab-tr-${process.pid}-${labCounter++}`;
    this.namespaces.push(ns);
    execFileSync('ip', ['netns', 'add', ns], { stdio: ['ignore', 'ignore', 'pipe'] });
    return ns;
  }

  /** Several `ip` commands in one process (`ip -batch`): one fork instead of one per command. */
  private batch(ns: string, commands: string[]): void {
    execFileSync('ip', ['-n', ns, '-batch', '-'], { input: commands.join('\n') + '\n', stdio: ['pipe', 'ignore', 'pipe'] });
  }

  exec(ns: string, argv: string[], input?: string): string {
    return execFileSync('ip', ['netns', 'exec', ns, ...argv], { input, encoding: 'utf8', maxBuffer: 64 << 20, timeout: 10_000 });
  }

  /** A pod namespace owning `ip`, routed from the node through its own veth (gateway = ip's /24 .1). */
  addPod(ip: string): { ns: string; gateway: string } {
    const ns = this.addNamespace();
    const dev = `p${this.podCount++}`;
    const gateway = ip.replace(/\.\d+$/, '.1');
    this.batch(this.node, [
      `link add ${dev} type veth peer name eth0 netns ${ns}`,
      `addr add ${gateway}/32 dev ${dev}`,
      `link set ${dev} up`,
      `route add ${ip}/32 dev ${dev}`,
    ]);
    this.batch(ns, [
      'link set lo up',
      `addr add ${ip}/32 dev eth0`,
      'link set eth0 up',
      `route add ${gateway}/32 dev eth0`,
      `route add default via ${gateway} dev eth0`,
    ]);
    return { ns, gateway };
  }

  /** Starts an HTTP server in `ns` on ip:port answering `name`; resolves once it listens. */
  serve(ns: string, name: string, ip: string, port: number): Promise<void> {
    const child = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', SERVER, name, ip, String(port)], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.servers.push(child);
    return new Promise((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`server ${name} did not start in 5 s: ${err}`)), 5_000);
      child.stderr!.on('data', (d) => (err += d));
      child.stdout!.on('data', (d) => {
        if (String(d).includes('ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`server ${name} exited (${code}): ${err}`));
      });
    });
  }

  /** One pod per backend, each serving its backend port; returns pod name by "ip:port". */
  async addBackends(backends: PodSpec[]): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    const ips = [...new Set(backends.map((b) => b.ip))];
    const pods = new Map(ips.map((ip) => [ip, this.addPod(ip).ns]));
    await Promise.all(
      backends.map((b) => {
        const name = `pod-${b.ip}-${b.port}`;
        names.set(`${b.ip}:${b.port}`, name);
        return this.serve(pods.get(b.ip)!, name, b.ip, b.port);
      }),
    );
    return names;
  }

  loadIptables(text: string): void {
    this.exec(this.node, ['iptables-restore'], text);
  }

  /** nft 1.0.6 cannot read JSON from a pipe ("Could not open file /dev/stdin"): JSON goes via a file. */
  loadNftJson(text: string): void {
    const path = join(this.scratch, 'rules.json');
    writeFileSync(path, loadableNftJson(text));
    this.exec(this.node, ['nft', '-j', '-f', path]);
  }

  /** n sequential HTTP GETs from the node namespace, each a new TCP connection (a new conntrack
   *  entry, so a new backend choice), each given timeoutMs. */
  request(host: string, port: number, n: number, opts: { timeoutMs?: number; from?: string } = {}): Outcome[] {
    return outcomes(this.exec(this.node, this.clientArgv(host, port, n, opts)));
  }

  /** request() without blocking the event loop (a trace monitor reads meanwhile), from the node or from `ns` (a pod); `signal` ends the client. */
  requestAsync(
    host: string,
    port: number,
    n: number,
    opts: { timeoutMs?: number; from?: string; signal?: AbortSignal; ns?: string } = {},
  ): Promise<Outcome[]> {
    const argv = ['netns', 'exec', opts.ns ?? this.node, ...this.clientArgv(host, port, n, opts)];
    return new Promise((resolve, reject) =>
      execFile('ip', argv, { encoding: 'utf8', timeout: 30_000, signal: opts.signal }, (err, stdout) =>
        err ? reject(err) : resolve(outcomes(stdout)),
      ),
    );
  }

  private clientArgv(host: string, port: number, n: number, opts: { timeoutMs?: number; from?: string }): string[] {
    return [process.execPath, '-e', CLIENT, host, String(port), String(n), String(opts.timeoutMs ?? 1_000), opts.from ?? ''];
  }

  /** Kills the servers, deletes every namespace (their veths go with them) and the scratch folder.
   *  Safe to call twice and after a half-built constructor run. */
  async close(): Promise<void> {
    await Promise.all(
      this.servers.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            const timer = setTimeout(() => {
              child.kill('SIGKILL');
              resolve();
            }, 2_000);
            child.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            child.kill('SIGTERM');
          }),
      ),
    );
    this.servers.length = 0;
    this.deleteNamespaces();
  }

  /** Synchronous part of close(), also run at process exit for labs nobody closed. */
  deleteNamespaces(): void {
    for (const ns of this.namespaces.splice(0).reverse()) spawnSync('ip', ['netns', 'del', ns]);
    rmSync(this.scratch, { recursive: true, force: true });
    live.delete(this);
  }
}
