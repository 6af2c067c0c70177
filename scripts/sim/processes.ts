/**
 * The sim provider's long-running processes as pidfiles under a state folder, so `dplab up` in
 * one process and `dplab down` (or the next start after a crash) in another find them. A pidfile
 * holds the pid and the process' start time from /proc, so a recycled pid is never killed.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawnDetached } from '../base/exec.ts';
import { DplabError } from '../base/errors.ts';

export interface DaemonSpec {
  /** Unique within the folder: names the pidfile and the log (`etcd`, `kube-proxy-dplab-iptables-worker`). */
  name: string;
  file: string;
  args: readonly string[];
  /** Run inside this network namespace (`ip netns exec`, which execs: the pid is the daemon's). */
  netns?: string;
  env?: Record<string, string | undefined>;
  cwd?: string;
}

interface PidRecord {
  pid: number;
  startTime: string;
  command: string[];
}

const pidDir = (dir: string) => join(dir, 'pids');
const logPath = (dir: string, name: string) => join(dir, 'logs', `${name}.log`);

/** Field 22 of /proc/<pid>/stat (start time in clock ticks); null when the process is gone. */
function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; fields after it follow the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (rest[0] === 'Z') return null;
    return rest[19] ?? null;
  } catch {
    return null;
  }
}

export function startDaemon(dir: string, spec: DaemonSpec): number {
  mkdirSync(pidDir(dir), { recursive: true });
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const [file, args] = spec.netns ? ['ip', ['netns', 'exec', spec.netns, spec.file, ...spec.args]] : [spec.file, spec.args];
  const pid = spawnDetached(file, args, { logFile: logPath(dir, spec.name), env: spec.env, cwd: spec.cwd });
  const record: PidRecord = { pid, startTime: startTimeOf(pid) ?? '', command: [file, ...args] };
  writeFileSync(join(pidDir(dir), `${spec.name}.json`), `${JSON.stringify(record)}\n`);
  return pid;
}

function readRecord(dir: string, name: string): PidRecord | null {
  try {
    return JSON.parse(readFileSync(join(pidDir(dir), `${name}.json`), 'utf8')) as PidRecord;
  } catch {
    return null;
  }
}

function isOurs(r: PidRecord): boolean {
  const now = startTimeOf(r.pid);
  return now !== null && (r.startTime === '' || now === r.startTime);
}

export function daemonAlive(dir: string, name: string): boolean {
  const r = readRecord(dir, name);
  return !!r && isOurs(r);
}

function daemonNames(dir: string): string[] {
  if (!existsSync(pidDir(dir))) return [];
  return readdirSync(pidDir(dir))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -5));
}

/** The tail of a daemon's log, for error details. */
export function logTail(dir: string, name: string, chars = 3000): string {
  try {
    const text = readFileSync(logPath(dir, name), 'utf8');
    return text.slice(-chars);
  } catch {
    return '(no log)';
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; removes the pidfile. Stopping a gone process is fine. */
async function stopDaemon(dir: string, name: string, graceMs = 5000): Promise<void> {
  const r = readRecord(dir, name);
  if (r && isOurs(r)) {
    try {
      process.kill(r.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    const until = Date.now() + graceMs;
    while (isOurs(r) && Date.now() < until) await sleep(100);
    if (isOurs(r)) {
      try {
        process.kill(r.pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
      const hard = Date.now() + 5000;
      while (isOurs(r) && Date.now() < hard) await sleep(50);
      if (isOurs(r))
        throw new DplabError(`Process ${name} (pid ${r.pid}) did not exit after SIGKILL.`, { fix: `Check \`ps -p ${r.pid}\`.` });
    }
  }
  rmSync(join(pidDir(dir), `${name}.json`), { force: true });
}

/** Stop every daemon recorded in the folder: those not in `order` first, then `order` backwards. */
export async function stopAll(dir: string, order: readonly string[] = []): Promise<void> {
  const rank = (n: string) => (order.includes(n) ? order.indexOf(n) : Number.MAX_SAFE_INTEGER);
  const ranked = daemonNames(dir).sort((a, b) => rank(b) - rank(a));
  for (const n of ranked) await stopDaemon(dir, n);
}
