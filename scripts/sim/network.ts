/**
 * The node network of a sim cluster: a bridge on the host (the host is on it like the Docker
 * host is on kind's network, at the gateway address), one network namespace per node named like
 * kind's node containers, a veth from each into the bridge, and — once the controller manager
 * has allocated pod CIDRs — kindnet's routes: in each node, every other node's pod CIDR via
 * that node's address. Like Docker's bridge, the host masquerades what the nodes send elsewhere
 * (a node can `apt-get install`). Removal finds everything by name, so it also works after a crash.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CommandError, run, type RunOptions } from '../base/exec.ts';
import type { SimLayout, SimNode } from './layout.ts';

const ip = (args: readonly string[], opts?: RunOptions) => run('ip', args, { timeoutMs: 15_000, ...opts });

/** `ip netns exec <node> …` — what `docker exec <node> …` is under kind. */
export const inNode = (node: string, args: readonly string[], opts?: RunOptions) =>
  run('ip', ['netns', 'exec', node, ...args], { timeoutMs: 60_000, ...opts });

async function listNetns(): Promise<string[]> {
  const r = await ip(['netns', 'list']);
  return r.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0])
    .filter(Boolean);
}

async function linkExists(name: string): Promise<boolean> {
  try {
    await ip(['link', 'show', 'dev', name]);
    return true;
  } catch (err) {
    if (err instanceof CommandError && err.kind === 'failed') return false;
    throw err;
  }
}

export async function createNodeNetwork(layout: SimLayout, signal?: AbortSignal): Promise<void> {
  const o = { signal };
  await ip(['link', 'add', layout.bridge, 'type', 'bridge'], o);
  await ip(['addr', 'add', `${layout.gateway}/${layout.prefixLength}`, 'dev', layout.bridge], o);
  await ip(['link', 'set', layout.bridge, 'up'], o);
  await run('sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1'], { timeoutMs: 15_000, signal });
  await hostRules([...bridgeRules(layout.bridge), ...uplinkRules(layout)], true, signal);
  for (const node of layout.nodes) await createNode(layout, node, signal);
}

interface HostRule {
  table: 'nat' | 'filter';
  chain: string;
  spec: string[];
}

/**
 * Put the host's iptables rules in place (`on`) or take them away, each checked first so a second
 * `up` or a `down` after a crash does the right thing. No iptables on the host: nothing to do.
 */
const hostIptables = (args: string[], signal?: AbortSignal) => run('iptables', ['-w', '5', ...args], { timeoutMs: 15_000, signal });

/** Whether the host has the rule; undefined when the host has no iptables. */
const hostHas = ({ table, chain, spec }: HostRule, signal?: AbortSignal): Promise<boolean | undefined> =>
  hostIptables(['-t', table, '-C', chain, ...spec], signal).then(
    () => true,
    (err: unknown) => (err instanceof CommandError && err.kind === 'tool-missing' ? undefined : false),
  );

async function hostRules(rules: readonly HostRule[], on: boolean, signal?: AbortSignal): Promise<void> {
  const iptables = (args: string[]) => hostIptables(args, signal);
  for (const rule of rules) {
    const { table, chain, spec } = rule;
    const present = await hostHas(rule, signal);
    if (present === undefined) return;
    if (on && !present) await iptables(['-t', table, '-I', chain, ...spec]);
    if (!on && present) await iptables(['-t', table, '-D', chain, ...spec]).catch(() => undefined);
  }
}

/**
 * The host's FORWARD rule for traffic between the nodes on the bridge. Where a Docker engine runs
 * on the same host, it loads br_netfilter (bridged frames pass iptables) and sets the FORWARD
 * policy to DROP, so without this rule the nodes cannot reach each other: measured here, the
 * workers' kubelet stand-ins never registered. Docker writes the same rule for its own bridges.
 */
const bridgeRules = (bridge: string): HostRule[] => [
  {
    table: 'filter',
    chain: 'FORWARD',
    spec: ['-i', bridge, '-o', bridge, '-m', 'comment', '--comment', 'dplab sim nodes', '-j', 'ACCEPT'],
  },
];

/**
 * The nodes' way out, as Docker's bridge network gives kind's nodes one: the host forwards what
 * leaves the bridge for elsewhere and masquerades it behind its own address, so `apt-get install`
 * in a node (ipvs-inspect's first step) reaches the host's package source. The nodes share the
 * host's files, so they resolve names with the host's resolv.conf. (`up` also turns on the host's
 * `net.ipv4.ip_forward`, as a Docker engine does; `down` leaves it.)
 */
function uplinkRules(layout: SimLayout): HostRule[] {
  const comment = ['-m', 'comment', '--comment', 'dplab sim uplink'];
  return [
    { table: 'nat', chain: 'POSTROUTING', spec: ['-s', layout.nodeSubnet, '!', '-o', layout.bridge, ...comment, '-j', 'MASQUERADE'] },
    { table: 'filter', chain: 'FORWARD', spec: ['-i', layout.bridge, '!', '-o', layout.bridge, ...comment, '-j', 'ACCEPT'] },
    {
      table: 'filter',
      chain: 'FORWARD',
      spec: ['-o', layout.bridge, '-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED', ...comment, '-j', 'ACCEPT'],
    },
  ];
}

async function createNode(layout: SimLayout, node: SimNode, signal?: AbortSignal): Promise<void> {
  const o = { signal };
  await ip(['netns', 'add', node.name], o);
  await ip(['link', 'add', node.hostVeth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', node.name], o);
  await ip(['link', 'set', node.hostVeth, 'master', layout.bridge, 'up'], o);
  await ip(['-n', node.name, 'link', 'set', 'lo', 'up'], o);
  await ip(['-n', node.name, 'addr', 'add', `${node.ip}/${layout.prefixLength}`, 'dev', 'eth0'], o);
  await ip(['-n', node.name, 'link', 'set', 'eth0', 'up'], o);
  await ip(['-n', node.name, 'route', 'add', 'default', 'via', layout.gateway], o);
  // A node forwards to its pods (kind's nodes and every CNI set this).
  await inNode(node.name, ['sysctl', '-q', '-w', 'net.ipv4.ip_forward=1'], o);
}

/** kindnet-style routes: in each node, every other node's pod CIDR via that node's address. */
export async function addPodRoutes(layout: SimLayout, podCidrs: Record<string, string>, signal?: AbortSignal): Promise<void> {
  for (const node of layout.nodes) {
    for (const other of layout.nodes) {
      if (other === node || !podCidrs[other.name]) continue;
      await ip(['-n', node.name, 'route', 'replace', podCidrs[other.name], 'via', other.ip], { signal });
    }
  }
}

async function killNetnsProcesses(ns: string): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    let pids: number[];
    try {
      pids = (await ip(['netns', 'pids', ns])).stdout
        .split('\n')
        .map(Number)
        .filter((p) => p > 0);
    } catch {
      return;
    }
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, attempt < 10 ? 'SIGTERM' : 'SIGKILL');
      } catch {
        // gone
      }
    }
    await sleep(200);
  }
}

/**
 * Remove every namespace whose name starts with the cluster's (nodes and the stand-in's pod
 * namespaces), any process still in one, the bridge, and /etc/netns leftovers. Idempotent.
 */
export async function deleteNodeNetwork(layout: SimLayout): Promise<string[]> {
  const removed: string[] = [];
  const ours = (await listNetns()).filter((n) => n.startsWith(`${layout.name}-`));
  // Pods first (their veths end in a node), then the nodes.
  ours.sort((a, b) => Number(layout.nodes.some((n) => n.name === a)) - Number(layout.nodes.some((n) => n.name === b)));
  for (const ns of ours) {
    await killNetnsProcesses(ns);
    await ip(['netns', 'delete', ns]).catch(() => undefined);
    removed.push(`netns ${ns}`);
  }
  await hostRules([...bridgeRules(layout.bridge), ...uplinkRules(layout)], false);
  for (const link of [layout.bridge, ...layout.nodes.map((n) => n.hostVeth)]) {
    if (await linkExists(link)) {
      await ip(['link', 'delete', link]).catch(() => undefined);
      removed.push(`link ${link}`);
    }
  }
  if (existsSync('/etc/netns')) {
    for (const d of readdirSync('/etc/netns').filter((n) => n.startsWith(`${layout.name}-`)))
      rmSync(join('/etc/netns', d), { recursive: true, force: true });
  }
  return removed;
}

/** What of the cluster's network still exists (for status and for the test that nothing is left). */
export async function leftovers(layout: SimLayout): Promise<string[]> {
  const ns = (await listNetns()).filter((n) => n.startsWith(`${layout.name}-`)).map((n) => `netns ${n}`);
  const links: string[] = [];
  for (const l of [layout.bridge, ...layout.nodes.map((n) => n.hostVeth)]) if (await linkExists(l)) links.push(`link ${l}`);
  const rules: string[] = [];
  for (const r of [...bridgeRules(layout.bridge), ...uplinkRules(layout)])
    if (await hostHas(r)) rules.push(`host rule -t ${r.table} ${r.chain} ${r.spec.join(' ')}`);
  return [...ns, ...links, ...rules];
}
