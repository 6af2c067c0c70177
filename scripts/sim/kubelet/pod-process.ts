/**
 * Starting processes in a pod's namespaces: `nsenter --uts=<file>` for the pod's hostname, then
 * `ip netns exec <pod>` for its network (and /etc/netns/<pod>/* over /etc). Both exec, so the
 * pid we get is the container's own process once it has started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface PodNamespaces {
  netns: string;
  utsFile: string;
}

export function podCommand(ns: PodNamespaces, argv: string[]): [string, string[]] {
  return ['nsenter', [`--uts=${ns.utsFile}`, '--', 'ip', 'netns', 'exec', ns.netns, ...argv]];
}

const BASE_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root' };

/** A container process, its own process group (so stop() reaches its children), output to logFile. */
export async function startContainerProcess(
  ns: PodNamespaces,
  argv: string[],
  env: Record<string, string>,
  logFile: string,
): Promise<ChildProcess> {
  await mkdir(dirname(logFile), { recursive: true });
  const log = await open(logFile, 'a');
  try {
    const [file, args] = podCommand(ns, argv);
    const child = spawn(file, args, { env: { ...BASE_ENV, ...env }, stdio: ['ignore', log.fd, log.fd], detached: true, cwd: '/' });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', reject);
    });
    return child;
  } finally {
    await log.close();
  }
}

/** Run a short command in the pod (exec probes); kills it after timeoutMs. */
export function execInPod(
  ns: PodNamespaces,
  argv: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ exitCode: number; output: string }> {
  return new Promise((resolve, reject) => {
    const [file, args] = podCommand(ns, argv);
    const child = spawn(file, args, { env: { ...BASE_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => {
      try {
        process.kill(-(child.pid ?? 0), 'SIGKILL');
      } catch {
        // already gone
      }
      reject(new Error(`command timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      resolve({ exitCode: code ?? (sig ? 128 : 1), output });
    });
  });
}

/** Signal a container's process group; false when it is already gone. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    try {
      process.kill(pid, signal);
      return true;
    } catch {
      return false;
    }
  }
}
