/**
 * The stand-in for one node: clean up after an earlier run, start the exec server, register the
 * Node, then run a PodWorker for every pod bound to this node until stopped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiClient } from './api-client.ts';
import { removeStaleState } from './cleanup.ts';
import type { KubeletConfig } from './config.ts';
import { allocateAddress } from './ipam.ts';
import { runInformer } from './informer.ts';
import { loadKubeconfig } from './kubeconfig.ts';
import { NodeAgent, machineFacts } from './node-agent.ts';
import { SIM_COMPONENTS } from '../components.ts';
import { KUBELET_PORT } from './node-object.ts';
import { ensureUtsMountPoint, releaseUtsMountPoint } from './pod-network.ts';
import { PodWorker, type Pod } from './pod-worker.ts';
import { statePaths } from './state.ts';

/** How long pods get to stop when the stand-in itself is stopped. */
const SHUTDOWN_GRACE_SECONDS = 2;
const EXEC_SERVER_RESTART_MS = 1_000;

export interface RunningKubelet {
  stop(): Promise<void>;
}

export async function startKubelet(config: KubeletConfig, log: (msg: string) => void): Promise<RunningKubelet> {
  const paths = statePaths(config.stateDir);
  await mkdir(paths.logs, { recursive: true });
  const stale = await removeStaleState(config.netns, paths);
  if (stale.length) log(`removed what an earlier run left behind: ${stale.join(', ')}`);
  await ensureUtsMountPoint(paths);

  const controller = new AbortController();
  const execServer = await superviseExecServer(config, paths.root, log, controller.signal);

  const api = new ApiClient(await loadKubeconfig(config.kubeconfig));
  const agent = new NodeAgent(api, config, await machineFacts(), log);
  await agent.register();
  const podCidr = await agent.podCidr(controller.signal);
  log(`pod CIDR ${podCidr}`);

  const used = new Set<string>();
  const workers = new Map<string, PodWorker>();
  const deps = {
    api,
    config,
    paths,
    podCidr,
    versions: {
      agnhost: SIM_COMPONENTS.find((c) => c.name === 'agnhost')?.version ?? 'unknown',
      'kube-proxy': SIM_COMPONENTS.find((c) => c.name === 'kube-proxy')?.version ?? 'unknown',
    },
    allocate: () => {
      const ip = allocateAddress(podCidr, used);
      used.add(ip);
      return ip;
    },
    release: (ip: string) => used.delete(ip),
    log,
  };
  const informer = runInformer<Pod & { metadata: { uid: string } }>(
    api,
    '/api/v1/pods',
    `fieldSelector=${encodeURIComponent(`spec.nodeName=${config.nodeName}`)}`,
    {
      upsert(pod) {
        const existing = workers.get(pod.metadata.uid);
        if (existing) return existing.update(pod);
        const terminal = (pod as { status?: { phase?: string } }).status?.phase;
        if ((terminal === 'Succeeded' || terminal === 'Failed') && !pod.metadata.deletionTimestamp) return;
        const w = new PodWorker(pod, deps);
        workers.set(pod.metadata.uid, w);
        void w.done.then(() => workers.delete(pod.metadata.uid));
        w.update(pod);
      },
      remove(pod) {
        void workers.get(pod.metadata.uid)?.stop(SHUTDOWN_GRACE_SECONDS, false);
      },
    },
    controller.signal,
    (err) => log(`pod watch: ${(err as Error).message}`),
  );

  return {
    async stop() {
      controller.abort();
      agent.stop();
      await Promise.all([...workers.values()].map((w) => w.stop(SHUTDOWN_GRACE_SECONDS, false)));
      await informer.catch(() => {});
      await execServer.stop();
      api.close();
      await removeStaleState(config.netns, paths);
      await releaseUtsMountPoint(paths);
    },
  };
}

/** An exec server an earlier, crashed run left holding :10250 (its pidfile names it). */
async function stopStaleExecServer(pidFile: string, stateDir: string, log: (msg: string) => void): Promise<void> {
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 1) return;
  const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
  // Only ours: the same binary name and this node's state folder (pids are recycled).
  if (!cmdline[0]?.endsWith('dplab-exec-server') || !cmdline.includes(stateDir)) return;
  log(`stopping the exec server an earlier run left (pid ${pid})`);
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  for (let i = 0; i < 50 && (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')); i++)
    await new Promise((r) => setTimeout(r, 50));
}

/** The exec server runs as long as the stand-in; restarted if it dies. */
async function superviseExecServer(config: KubeletConfig, stateDir: string, log: (msg: string) => void, signal: AbortSignal) {
  const pidFile = join(stateDir, 'exec-server.pid');
  await stopStaleExecServer(pidFile, stateDir, log);
  let child: ChildProcess | null = null;
  const startOne = () => {
    if (signal.aborted) return;
    const args = [
      '--listen',
      `${config.nodeIP}:${KUBELET_PORT}`,
      '--state-dir',
      stateDir,
      '--agnhost',
      join(config.binDir, 'agnhost'),
      '--node-ip',
      config.nodeIP,
    ];
    if (config.clientCAFile) args.push('--client-ca', config.clientCAFile);
    if (config.servingCertFile && config.servingKeyFile) args.push('--cert', config.servingCertFile, '--key', config.servingKeyFile);
    const c = spawn(join(config.binDir, 'dplab-exec-server'), args, { stdio: ['ignore', 'inherit', 'inherit'] });
    child = c;
    if (c.pid) void writeFile(pidFile, `${c.pid}\n`).catch(() => {});
    c.on('error', (err) => log(`exec server: ${err.message}`));
    c.on('exit', (code, sig) => {
      if (signal.aborted) return;
      log(`exec server exited (${code ?? sig}); restarting`);
      setTimeout(startOne, EXEC_SERVER_RESTART_MS);
    });
  };
  startOne();
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        const c = child;
        if (!c || c.exitCode !== null || c.signalCode !== null) return resolve();
        c.once('exit', () => resolve());
        c.kill('SIGTERM');
      }),
  };
}
