/**
 * Starting processes in a pod's namespaces: `nsenter --uts=<file>` for the pod's hostname, then
 * `ip netns exec <pod>` for its network (and /etc/netns/<pod>/* over /etc). A hostNetwork pod has
 * neither: it runs in the node's network namespace, where the stand-in itself runs. Volumes are
 * bind mounts made by a small shell in a private mount namespace (the one `ip netns exec` makes,
 * or `unshare --mount` for host pods). Every step execs, so the pid we get is the container's own
 * process once it has started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';

interface PodNamespaces {
  netns: string;
  utsFile: string;
}

/** A volume as the container sees it: `source` on the host bound over `target`. */
export interface BindMount {
  source: string;
  target: string;
  readOnly: boolean;
}

/** Where a container runs: its pod's namespaces, or (null) the node's, as hostNetwork pods do. */
export interface PodPlace {
  ns: PodNamespaces | null;
  mounts: readonly BindMount[];
}

/** Makes each mount (`source target ro|rw` triples up to `--`), then execs the rest. */
const MOUNT_SCRIPT =
  'while [ "$1" != -- ]; do mkdir -p "$2" && mount --bind "$1" "$2" || exit 127; ' +
  'if [ "$3" = ro ]; then mount -o remount,bind,ro "$2" || exit 127; fi; shift 3; done; shift; exec "$@"';

function podCommand(place: PodPlace, argv: string[]): [string, string[]] {
  const mounted = place.mounts.length
    ? ['sh', '-c', MOUNT_SCRIPT, 'sh', ...place.mounts.flatMap((m) => [m.source, m.target, m.readOnly ? 'ro' : 'rw']), '--', ...argv]
    : argv;
  if (place.ns) return ['nsenter', [`--uts=${place.ns.utsFile}`, '--', 'ip', 'netns', 'exec', place.ns.netns, ...mounted]];
  if (place.mounts.length) return ['unshare', ['--mount', '--propagation', 'private', '--', ...mounted]];
  return [argv[0], argv.slice(1)];
}

const BASE_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root' };

/** A container process, its own process group (so stop() reaches its children), output to logFile. */
export async function startContainerProcess(
  place: PodPlace,
  argv: string[],
  env: Record<string, string>,
  logFile: string,
): Promise<ChildProcess> {
  await mkdir(dirname(logFile), { recursive: true });
  const log = await open(logFile, 'a');
  try {
    const [file, args] = podCommand(place, argv);
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
  place: PodPlace,
  argv: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ exitCode: number; output: string }> {
  return new Promise((resolve, reject) => {
    const [file, args] = podCommand(place, argv);
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
