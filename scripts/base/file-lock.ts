/**
 * One process at a time for work two dplab processes may start at once on one machine (two
 * builds of the same Go component into one cache: the kind test environment and the sim tier, or
 * two terminals): a lock file made with O_EXCL holds the owner's pid. A lock whose owner is gone
 * (killed, crashed) is taken over; a live owner is waited for, and the wait says who holds it.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';

/** Whether a process with this pid exists (EPERM: it does, under another user). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface LockOptions {
  /** Said once, when the lock is held by another live process: its pid. */
  onWait?: (holder: number) => void;
  signal?: AbortSignal;
  /** How often a waiter looks again (default 1 s). */
  pollMs?: number;
}

/** Locks this process holds now: a lock file naming this pid but not in here was left by an earlier process with the same pid. */
const held = new Set<string>();

function tryTake(path: string): number | null {
  try {
    writeFileSync(path, `${process.pid}\n`, { flag: 'wx' });
    return null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  let holder: number;
  try {
    holder = Number(readFileSync(path, 'utf8').trim());
  } catch {
    return -1; // released between the two calls: try again at once
  }
  if (holder === process.pid ? held.has(path) : pidAlive(holder)) return holder;
  // Its owner is gone (or wrote nothing yet and died): take it over, then race for it again.
  rmSync(path, { force: true });
  return -1;
}

/** Runs fn holding the lock at `path`; the lock file is removed when fn ends, however it ends. */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, opts: LockOptions = {}): Promise<T> {
  let told = false;
  for (;;) {
    opts.signal?.throwIfAborted();
    const holder = tryTake(path);
    if (holder === null) {
      held.add(path);
      break;
    }
    if (holder === -1) continue;
    if (!told) opts.onWait?.(holder);
    told = true;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, opts.pollMs ?? 1000);
      opts.signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(t);
          resolve();
        },
        { once: true },
      );
    });
  }
  try {
    return await fn();
  } finally {
    held.delete(path);
    rmSync(path, { force: true });
  }
}
