/**
 * The test environment's own Docker engine: Debian's docker.io (installed when missing), started
 * with its own data root, exec root, socket and pidfile, so it never touches a Docker the
 * machine already runs, and with dplab-runc (test/kind/runtime) as its default runtime, which
 * drops the capabilities this host's root cannot grant. `stop` deletes the environment's kind
 * clusters first, then ends the daemon.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { CommandError, run, type RunOptions } from '../../scripts/base/exec.ts';
import { DplabError } from '../../scripts/base/errors.ts';
import { aptInstall } from './rootfs.ts';
import { engineHost, engineSocket, paths } from './layout.ts';
import { join } from 'node:path';

const pidFile = () => join(paths.engineRun(), 'docker.pid');
const START_TIMEOUT_MS = 60_000;

/** Run options that point docker and kind at this engine. */
export function engineEnv(): RunOptions {
  return { env: { DOCKER_HOST: engineHost() } };
}

function alivePid(): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(pidFile(), 'utf8'), 10);
    if (pid > 0) {
      process.kill(pid, 0);
      return pid;
    }
  } catch {
    // no pidfile, or the process is gone
  }
  return undefined;
}

export async function engineAnswers(signal?: AbortSignal): Promise<boolean> {
  try {
    await run('docker', ['version', '--format', '{{.Server.Version}}'], { ...engineEnv(), timeoutMs: 10_000, signal });
    return true;
  } catch (err) {
    if (err instanceof CommandError && err.kind === 'tool-missing') throw err;
    return false;
  }
}

async function haveDockerd(signal?: AbortSignal): Promise<void> {
  if (existsSync('/usr/sbin/dockerd')) return;
  await aptInstall(['docker.io'], signal);
}

export interface EngineInfo {
  serverVersion: string;
  cgroupVersion: string;
  kernelVersion: string;
}

export async function engineInfo(signal?: AbortSignal): Promise<EngineInfo> {
  const r = await run('docker', ['info', '--format', '{{json .}}'], { ...engineEnv(), timeoutMs: 30_000, signal });
  const raw = JSON.parse(r.stdout) as { ServerVersion?: string; CgroupVersion?: string; KernelVersion?: string };
  return { serverVersion: raw.ServerVersion ?? '', cgroupVersion: raw.CgroupVersion ?? '', kernelVersion: raw.KernelVersion ?? '' };
}

/** Start the engine (or find it running); `runtime` is the dplab-runc binary. */
export async function startEngine(runtime: string, say: (l: string) => void, signal?: AbortSignal): Promise<void> {
  if (alivePid() && (await engineAnswers(signal))) {
    say(`engine: running (${engineHost()})`);
    return;
  }
  await haveDockerd(signal);
  mkdirSync(paths.engineData(), { recursive: true });
  mkdirSync(paths.engineRun(), { recursive: true });
  rmSync(engineSocket(), { force: true });
  const log = openSync(paths.engineLog(), 'a');
  const args = [
    '--data-root',
    paths.engineData(),
    '--exec-root',
    join(paths.engineRun(), 'exec'),
    '--pidfile',
    pidFile(),
    '--host',
    engineHost(),
    '--add-runtime',
    `dplab-runc=${runtime}`,
    '--default-runtime',
    'dplab-runc',
    // Its containers in containerd namespaces of their own, apart from any other engine's.
    '--containerd-namespace',
    'dplab-testenv',
    '--containerd-plugins-namespace',
    'dplab-testenv-plugins',
  ];
  const child = spawn('/usr/sbin/dockerd', args, { detached: true, stdio: ['ignore', log, log] });
  child.unref();
  closeSync(log);
  const end = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < end) {
    if (child.exitCode !== null) break;
    if (await engineAnswers(signal)) {
      const info = await engineInfo(signal);
      say(`engine: started Docker ${info.serverVersion} (cgroup v${info.cgroupVersion}, ${engineHost()}, log ${paths.engineLog()})`);
      return;
    }
    await sleep(500);
  }
  const tail = readFileSync(paths.engineLog(), 'utf8').split('\n').slice(-15).join('\n');
  throw new DplabError("The test environment's Docker engine did not start.", {
    fix: `Read ${paths.engineLog()}; \`npm run testenv -- down\` clears a half-started engine.`,
    details: tail,
  });
}

/** Delete this engine's kind clusters, then end the daemon and wait for it. */
export async function stopEngine(say: (l: string) => void, signal?: AbortSignal): Promise<void> {
  if (await engineAnswers(signal)) {
    const clusters = (
      await run('kind', ['get', 'clusters'], { ...engineEnv(), timeoutMs: 60_000, signal }).catch(() => ({ stdout: '' }))
    ).stdout
      .split('\n')
      .map((s) => s.trim())
      .filter(Boolean);
    for (const name of clusters) {
      say(`engine: deleting kind cluster ${name}`);
      await run('kind', ['delete', 'cluster', '--name', name], { ...engineEnv(), timeoutMs: 5 * 60_000, signal });
    }
  }
  const pid = alivePid();
  if (!pid) {
    say('engine: not running');
    return;
  }
  process.kill(pid, 'SIGTERM');
  const end = Date.now() + 60_000;
  while (Date.now() < end && alivePid()) await sleep(250);
  if (alivePid()) process.kill(pid, 'SIGKILL');
  writeFileSync(pidFile(), '');
  say('engine: stopped');
}
