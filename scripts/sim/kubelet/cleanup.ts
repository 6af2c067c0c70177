/**
 * Removes what a previous stand-in on this node left behind (a crash, a SIGKILL): every process
 * in its pods' network namespaces, the namespaces (their veths go with them), the UTS namespace
 * files, /etc/netns entries, volumes and the state records. Found from the records and, for
 * anything a crash left without a record, from the node's pod-namespace prefix. A hostNetwork
 * pod's processes share the node's namespace: they are stopped by their recorded pids, if those
 * are still processes in the node's network namespace.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from '../../base/exec.ts';
import { podNetnsPrefix, removeSandbox, type SandboxNames } from './pod-network.ts';
import { readPodRecords, type StatePaths } from './state.ts';

export async function listNetns(): Promise<string[]> {
  const r = await run('ip', ['netns', 'list'], { timeoutMs: 5_000 }).catch(() => null);
  return (r?.stdout ?? '')
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0])
    .filter(Boolean);
}

/** Returns the namespaces it removed, for the log. */
export async function removeStaleState(nodeNetns: string, paths: StatePaths): Promise<string[]> {
  const { records, broken } = await readPodRecords(paths);
  const targets = new Map<string, SandboxNames>();
  for (const r of records) {
    if (r.hostNetwork) {
      for (const c of r.containers) if (c.pid) await killIfInNode(c.pid, nodeNetns);
      continue;
    }
    targets.set(r.netns, { node: nodeNetns, netns: r.netns, hostVeth: r.hostVeth, utsFile: r.utsFile });
  }
  const prefix = podNetnsPrefix(nodeNetns);
  for (const ns of await listNetns()) {
    if (ns.startsWith(prefix) && !targets.has(ns))
      targets.set(ns, { node: nodeNetns, netns: ns, hostVeth: `veth${ns.slice(prefix.length)}`, utsFile: join(paths.uts, ns) });
  }
  const utsLeft = await readdir(paths.uts).catch(() => [] as string[]);
  for (const f of utsLeft) {
    if (f.startsWith(prefix) && !targets.has(f))
      targets.set(f, { node: nodeNetns, netns: f, hostVeth: `veth${f.slice(prefix.length)}`, utsFile: join(paths.uts, f) });
  }
  for (const names of targets.values()) await removeSandbox(names);
  await rm(paths.pods, { recursive: true, force: true });
  await rm(join(paths.root, 'volumes'), { recursive: true, force: true });
  for (const b of broken) await rm(b, { force: true });
  return [...targets.keys()];
}

/** SIGKILL a recorded host pod's process group, unless the pid now names a process elsewhere. */
async function killIfInNode(pid: number, nodeNetns: string): Promise<void> {
  if (pid === process.pid) return;
  const [mine, node] = await Promise.all([
    stat(`/proc/${pid}/ns/net`).catch(() => null),
    stat(`/run/netns/${nodeNetns}`).catch(() => null),
  ]);
  if (!mine || !node || mine.ino !== node.ino || mine.dev !== node.dev) return;
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
      return;
    } catch {
      // no such group: try the process itself
    }
  }
}
