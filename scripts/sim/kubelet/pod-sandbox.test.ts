// Real kernel: a pod sandbox made by the stand-in's own code, with a "container" process in it,
// reached from the node over the ptp wiring; then removal and crash clean-up leave nothing.
// Needs root and `ip netns` (skipped with the reason otherwise). No API server involved.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { whyNot } from '../../../test/dataplane/netns-lab.ts';
import { fetchInNetns } from '../../../test/fixtures/netns-fetch.ts';
import { processAlive } from '../../../test/fixtures/process-alive.ts';
import { removeStaleState, listNetns } from './cleanup.ts';
import {
  clusterFirstDns,
  createSandbox,
  ensureUtsMountPoint,
  removeSandbox,
  renderHosts,
  renderResolvConf,
  sandboxNames,
} from './pod-network.ts';
import { execInPod, startContainerProcess } from './pod-process.ts';
import { statePaths, writePodRecord } from './state.ts';

const reason = whyNot();
const NODE = `dplab-kt-${process.pid}`;
const POD_CIDR = '10.250.7.0/24';
const SERVER = "require('http').createServer((q,s)=>s.end(require('os').hostname()+' '+process.env.GREETING)).listen(8080)";

function inNode(argv: string[]): string {
  return execFileSync('ip', ['netns', 'exec', NODE, ...argv], { encoding: 'utf8', timeout: 10_000 });
}

describe.skipIf(reason !== null)(`pod sandbox on the real kernel${reason ? ` (skipped: ${reason})` : ''}`, () => {
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dplab-sandbox-'));
    execFileSync('ip', ['netns', 'add', NODE]);
    execFileSync('ip', ['-n', NODE, 'link', 'set', 'lo', 'up']);
    await ensureUtsMountPoint(statePaths(dir));
  });
  afterAll(async () => {
    await removeStaleState(NODE, statePaths(dir)).catch(() => {});
    spawnSync('ip', ['netns', 'del', NODE]);
    spawnSync('umount', [statePaths(dir).uts]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a container in the pod namespaces, reachable from the node, and removes it all', async () => {
    const paths = statePaths(dir);
    const names = sandboxNames(NODE, '1f2e3d4c-0000-4000-8000-000000000001', paths);
    await createSandbox({
      names,
      podCidr: POD_CIDR,
      podIP: '10.250.7.2',
      hostname: 'web-0',
      resolvConf: renderResolvConf(clusterFirstDns('demo', ['10.96.0.10'], 'cluster.local')),
      hosts: renderHosts('10.250.7.2', 'web-0'),
    });
    // What a container sees: its hostname, the cluster DNS resolv.conf, its address.
    const env = { GREETING: 'hello' };
    expect((await execInPod({ ns: names, mounts: [] }, ['hostname'], env, 5_000)).output.trim()).toBe('web-0');
    const resolv = (await execInPod({ ns: names, mounts: [] }, ['cat', '/etc/resolv.conf'], env, 5_000)).output;
    expect(resolv).toContain('nameserver 10.96.0.10');
    expect(resolv).toContain('search demo.svc.cluster.local svc.cluster.local cluster.local');
    expect((await execInPod({ ns: names, mounts: [] }, ['ip', '-4', '-o', 'addr', 'show', 'eth0'], env, 5_000)).output).toContain(
      '10.250.7.2/24',
    );
    expect((await execInPod({ ns: names, mounts: [] }, ['sh', '-c', 'exit 3'], env, 5_000)).exitCode).toBe(3);
    // The host keeps its own hostname: the pod's is in its own UTS namespace.
    expect(execFileSync('hostname', { encoding: 'utf8' }).trim()).not.toBe('web-0');

    const log = join(paths.logs, 'web-0', '0.log');
    const child = await startContainerProcess(
      { ns: names, mounts: [] },
      [process.execPath, '-e', `${SERVER};console.log('serving')`],
      env,
      log,
    );
    let answer = '';
    for (let i = 0; i < 50 && !answer; i++) {
      answer = fetchInNetns(NODE, 'http://10.250.7.2:8080/', 5_000);
      if (!answer) await new Promise((r) => setTimeout(r, 100));
    }
    expect(answer).toBe('web-0 hello');
    expect(readFileSync(log, 'utf8')).toContain('serving');
    expect(inNode(['ip', 'route', 'show', '10.250.7.2'])).toContain(`dev ${names.hostVeth} scope host`);

    await removeSandbox(names);
    await new Promise((r) => setTimeout(r, 200));
    expect(processAlive(child.pid!)).toBe(false);
    expect(await listNetns()).not.toContain(names.netns);
    expect(inNode(['ip', '-o', 'link'])).not.toContain(names.hostVeth);
    expect(existsSync(join('/etc/netns', names.netns))).toBe(false);
    expect(existsSync(names.utsFile)).toBe(false);
  });

  it('after a crash, removes the sandboxes, processes and records an earlier run left', async () => {
    const paths = statePaths(dir);
    const names = sandboxNames(NODE, '2f2e3d4c-0000-4000-8000-000000000002', paths);
    await createSandbox({ names, podCidr: POD_CIDR, podIP: '10.250.7.3', hostname: 'left-over', resolvConf: '', hosts: '' });
    const child = await startContainerProcess({ ns: names, mounts: [] }, ['sleep', '600'], {}, join(paths.logs, 'left', '0.log'));
    child.unref();
    await writePodRecord(paths, {
      namespace: 'demo',
      name: 'left-over',
      uid: 'x',
      netns: names.netns,
      utsFile: names.utsFile,
      hostVeth: names.hostVeth,
      ip: '10.250.7.3',
      containers: [],
    });
    // A second sandbox without a record (crash between creating it and writing the record).
    const orphan = sandboxNames(NODE, '3f2e3d4c-0000-4000-8000-000000000003', paths);
    await createSandbox({ names: orphan, podCidr: POD_CIDR, podIP: '10.250.7.4', hostname: 'orphan', resolvConf: '', hosts: '' });

    const removed = await removeStaleState(NODE, paths);
    expect(removed.sort()).toEqual([names.netns, orphan.netns].sort());
    await new Promise((r) => setTimeout(r, 200));
    expect(processAlive(child.pid!)).toBe(false);
    const left = await listNetns();
    expect(left).not.toContain(names.netns);
    expect(left).not.toContain(orphan.netns);
    expect(inNode(['ip', '-o', 'link'])).not.toMatch(/veth/);
    expect(existsSync(paths.pods)).toBe(false);
  });

  it("runs a hostNetwork container with a volume bound over its path, seen only by it; a crash's clean-up stops it by pid", async () => {
    const paths = statePaths(dir);
    const volume = join(dir, 'vol');
    const target = join(dir, 'mnt');
    execFileSync('mkdir', ['-p', volume, target]);
    execFileSync('sh', ['-c', `echo 'scheduler: lc' > ${volume}/config.conf`]);
    const place = { ns: null, mounts: [{ source: volume, target, readOnly: true }] };
    const seen = await execInPod(
      place,
      ['sh', '-c', `cat ${target}/config.conf; touch ${target}/x 2>/dev/null || echo read-only`],
      {},
      5_000,
    );
    expect(seen.output).toBe('scheduler: lc\nread-only\n');
    expect(existsSync(join(target, 'config.conf'))).toBe(false); // the mount was the container's own
    // As the stand-in runs it: in the node's network namespace (here entered by ip netns exec, which execs).
    const child = await startContainerProcess(place, ['ip', 'netns', 'exec', NODE, 'sleep', '600'], {}, join(paths.logs, 'host', '0.log'));
    child.unref();
    await new Promise((r) => setTimeout(r, 300));
    await writePodRecord(paths, {
      namespace: 'kube-system',
      name: 'kube-proxy-x',
      uid: 'h',
      netns: NODE,
      utsFile: '/proc/self/ns/uts',
      hostVeth: '',
      hostNetwork: true,
      ip: '10.0.0.2',
      containers: [{ name: 'kube-proxy', pid: child.pid!, logFile: '', env: {}, restartCount: 0 }],
    });
    const removed = await removeStaleState(NODE, paths);
    expect(removed).toEqual([]); // the node's own namespace is not a sandbox to remove
    await new Promise((r) => setTimeout(r, 200));
    expect(processAlive(child.pid!)).toBe(false);
    expect(await listNetns()).toContain(NODE);
  });
});
