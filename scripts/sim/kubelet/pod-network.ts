/**
 * A pod's sandbox: its own network namespace wired point-to-point to the node (as kindnet's ptp
 * plugin does it: pod eth0 has its address with the pod CIDR's mask but only a route to the
 * gateway and a default via it; the node side of every veth carries the gateway /32 and a /32
 * route to the pod), a UTS namespace whose hostname is the pod name, and /etc/netns/<ns>/
 * resolv.conf and hosts, which `ip netns exec` bind-mounts over /etc for every process it starts.
 *
 * Node-side commands name the node (`ip -n <node>`), so this works from any network namespace
 * of the host's mount namespace.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run, CommandError } from '../../base/exec.ts';
import { gatewayOf, parseCidr } from './ipam.ts';
import type { StatePaths } from './state.ts';

export interface SandboxNames {
  /** The node's network namespace (node-side commands run with `ip -n <node>`). */
  node: string;
  netns: string;
  hostVeth: string;
  utsFile: string;
}

/** Names derived from the pod uid: short enough for interface names (15 characters). */
export function sandboxNames(nodeNetns: string, uid: string, paths: StatePaths): SandboxNames {
  const short = uid.replace(/-/g, '').slice(0, 8);
  const netns = `${nodeNetns}-pod-${short}`;
  return { node: nodeNetns, netns, hostVeth: `veth${short}`, utsFile: join(paths.uts, netns) };
}

/** Prefix of every pod namespace this node made (for finding leftovers after a crash). */
export function podNetnsPrefix(nodeNetns: string): string {
  return `${nodeNetns}-pod-`;
}

export interface DnsConfig {
  nameservers: string[];
  searches: string[];
  options: string[];
}

/** The pod's resolv.conf under dnsPolicy ClusterFirst, as the kubelet writes it. Pure. */
export function clusterFirstDns(namespace: string, clusterDNS: string[], clusterDomain: string): DnsConfig {
  return {
    nameservers: clusterDNS,
    searches: [`${namespace}.svc.${clusterDomain}`, `svc.${clusterDomain}`, clusterDomain],
    options: ['ndots:5'],
  };
}

export function renderResolvConf(dns: DnsConfig): string {
  const lines = [`search ${dns.searches.join(' ')}`, ...dns.nameservers.map((n) => `nameserver ${n}`)];
  if (dns.options.length) lines.push(`options ${dns.options.join(' ')}`);
  return `${lines.join('\n')}\n`;
}

/** The kubelet-managed /etc/hosts of a pod. Pure. */
export function renderHosts(podIP: string, hostname: string, subdomainFqdn?: string): string {
  return [
    '# Kubernetes-managed hosts file (dplab sim kubelet stand-in).',
    '127.0.0.1\tlocalhost',
    '::1\tlocalhost ip6-localhost ip6-loopback',
    'fe00::0\tip6-localnet',
    'fe00::0\tip6-mcastprefix',
    'fe00::1\tip6-allnodes',
    'fe00::2\tip6-allrouters',
    `${podIP}\t${subdomainFqdn ? `${subdomainFqdn}\t` : ''}${hostname}`,
    '',
  ].join('\n');
}

const ip = (args: string[]) => run('ip', args, { timeoutMs: 15_000 });

async function ignoreMissing(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
  }
}

/** The UTS namespace files need a private mount point to be bind-mounted on (as /run/netns is for ip). */
export async function ensureUtsMountPoint(paths: StatePaths): Promise<void> {
  await mkdir(paths.uts, { recursive: true });
  const mounts = await run('findmnt', ['-n', '-o', 'TARGET', '--mountpoint', paths.uts], { timeoutMs: 5_000 }).catch(() => null);
  if (mounts && mounts.stdout.trim()) return;
  await run('mount', ['--bind', paths.uts, paths.uts], { timeoutMs: 5_000 });
  await run('mount', ['--make-private', paths.uts], { timeoutMs: 5_000 });
}

/** Undo ensureUtsMountPoint once no sandbox is left (so the state folder can be removed). */
export async function releaseUtsMountPoint(paths: StatePaths): Promise<void> {
  await ignoreMissing(run('umount', [paths.uts], { timeoutMs: 5_000 }));
}

export interface SandboxSpec {
  names: SandboxNames;
  podCidr: string;
  podIP: string;
  hostname: string;
  resolvConf: string;
  hosts: string;
}

/** Create the sandbox; on any failure what was made is removed again before the error is thrown. */
export async function createSandbox(spec: SandboxSpec): Promise<void> {
  const { names } = spec;
  const gw = gatewayOf(spec.podCidr);
  const prefix = parseCidr(spec.podCidr).prefix;
  const peer = `p${names.hostVeth.slice(4)}`;
  try {
    const etc = join('/etc/netns', names.netns);
    await mkdir(etc, { recursive: true });
    await writeFile(join(etc, 'resolv.conf'), spec.resolvConf);
    await writeFile(join(etc, 'hosts'), spec.hosts);
    await writeFile(join(etc, 'hostname'), `${spec.hostname}\n`);
    await ip(['netns', 'add', names.netns]);
    await ip(['-n', names.node, 'link', 'add', names.hostVeth, 'type', 'veth', 'peer', 'name', peer, 'netns', names.netns]);
    await ip(['-n', names.netns, 'link', 'set', peer, 'name', 'eth0']);
    await ip(['-n', names.netns, 'link', 'set', 'lo', 'up']);
    await ip(['-n', names.netns, 'addr', 'add', `${spec.podIP}/${prefix}`, 'dev', 'eth0', 'noprefixroute']);
    await ip(['-n', names.netns, 'link', 'set', 'eth0', 'up']);
    await ip(['-n', names.netns, 'route', 'add', `${gw}/32`, 'dev', 'eth0', 'scope', 'link']);
    await ip(['-n', names.netns, 'route', 'add', 'default', 'via', gw, 'dev', 'eth0', 'src', spec.podIP]);
    await ip(['-n', names.node, 'addr', 'add', `${gw}/32`, 'dev', names.hostVeth]);
    await ip(['-n', names.node, 'link', 'set', names.hostVeth, 'up']);
    await ip(['-n', names.node, 'route', 'replace', `${spec.podIP}/32`, 'dev', names.hostVeth, 'scope', 'host']);
    // A persistent UTS namespace with the pod's hostname, shared by its containers and exec.
    await writeFile(names.utsFile, '');
    await run('unshare', [`--uts=${names.utsFile}`, 'hostname', spec.hostname], { timeoutMs: 5_000 });
  } catch (err) {
    await removeSandbox(names);
    throw err;
  }
}

async function netnsPids(netns: string): Promise<number[]> {
  const r = await run('ip', ['netns', 'pids', netns], { timeoutMs: 5_000 }).catch(() => null);
  return (r?.stdout ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 1 && n !== process.pid);
}

/** SIGKILL every process in the namespace, then wait (bounded) until none is left. */
async function killNetnsProcesses(netns: string): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const pids = await netnsPids(netns);
    if (!pids.length) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Remove everything createSandbox makes, and any process still inside; safe to call twice or on a half-made sandbox. */
export async function removeSandbox(names: SandboxNames): Promise<void> {
  await killNetnsProcesses(names.netns);
  await ignoreMissing(ip(['-n', names.node, 'link', 'del', names.hostVeth]));
  await ignoreMissing(ip(['netns', 'del', names.netns]));
  await ignoreMissing(run('umount', [names.utsFile], { timeoutMs: 5_000 }));
  await rm(names.utsFile, { force: true });
  await rm(join('/etc/netns', names.netns), { recursive: true, force: true });
}
