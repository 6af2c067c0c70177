/**
 * A Unix user per seat on the local backend, so that learners on one host are kept apart by the
 * kernel, not only by the portal's tokens. The portal runs as root; each seat gets a uid and gid
 * of its own (numbers from SEAT_UID_BASE up, no passwd entry needed), which its runner's shells
 * switch to (terminals/shell-user.ts). Each seat's folder is root's, open to the seat's group
 * only (0710), and the folder holding the seats can be crossed but not listed (0711): one seat's
 * shell cannot list the seats, enter another seat's folder, or read another seat's kubeconfig,
 * workspace, token or processes' environments. When a seat is deleted, every process its user
 * still has (a shell's `nohup … &`) is killed before the number can go to another seat.
 */
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { DplabError } from '../base/errors.ts';
import { pidAlive } from '../base/file-lock.ts';
import type { ShellUser } from '../terminals/shell-user.ts';
import { startSeatWatchdog } from './seat-watchdog.ts';

/** Far above the uids of people (1000+) and of rootless containers' subordinate ranges (100000 + 65536·n, as usually set up). */
export const SEAT_UID_BASE = 2_000_000_000;

/** How many uids the portal may use: a workshop is at most a few hundred seats. */
const SEAT_UID_RANGE = 10_000;

/**
 * The host-wide register of seat uids in use: one file per uid holding the pid of the portal that
 * has it (first line) and the seat's folder (second), so a second portal on the host (another
 * workshop) never gives out a uid the first one uses (issue 36: its first learner got the other
 * workshop's first uid and read that workspace). A claim outlives its portal while the seat's
 * folder is still that uid's: a portal killed and started again takes the seat back with its uid.
 */
export const SEAT_UID_REGISTRY = '/run/dplab/seat-uids';

export class SeatUsers {
  readonly #used = new Set<number>();
  #watching = false;

  constructor(
    readonly base: number = SEAT_UID_BASE,
    readonly registry: string = SEAT_UID_REGISTRY,
  ) {}

  /** Is `uid` one of this portal's seat users (a leftover folder's group tells it)? */
  owns(uid: number): boolean {
    return uid >= this.base && uid < this.base + SEAT_UID_RANGE;
  }

  /** The lowest seat user free on this host (no portal's claim on it, no process of it running) for the seat in `folder`. */
  take(folder = ''): ShellUser {
    for (let uid = this.base; uid < this.base + SEAT_UID_RANGE; uid++)
      if (!this.#used.has(uid) && this.#claim(uid, folder)) {
        this.#used.add(uid);
        return { uid, gid: uid };
      }
    throw new DplabError(`Every one of the ${SEAT_UID_RANGE} seat users is taken.`);
  }

  /**
   * A seat user found on disk (a seat an earlier portal left): ours from now on, not given out again
   * until released. Refused (the pid of the holder returned) while another live portal holds it:
   * two workshops never share a uid, even one an older portal took while this seat's was dead.
   */
  adopt(uid: number, folder = ''): { ok: true } | { ok: false; holder: number } {
    const holder = Number(readFirstLine(join(this.registry, String(uid))));
    if (holder && holder !== process.pid && pidAlive(holder)) return { ok: false, holder };
    this.#write(uid, 'w', folder);
    this.#used.add(uid);
    return { ok: true };
  }

  /** Is `uid` this portal's seat user now, or held by another live portal on the host (its seat still exists)? */
  inUse(uid: number): boolean {
    if (this.#used.has(uid)) return true;
    const holder = Number(readFirstLine(join(this.registry, String(uid))));
    return holder !== process.pid && pidAlive(holder);
  }

  /** Ends every process of the user, then frees its number, here and in the host's register. */
  async release(user: ShellUser): Promise<void> {
    await endUserProcesses(user.uid);
    this.#used.delete(user.uid);
    rmSync(join(this.registry, String(user.uid)), { force: true });
  }

  #write(uid: number, flag: 'w' | 'wx', folder: string): void {
    mkdirSync(this.registry, { recursive: true, mode: 0o700 });
    writeFileSync(join(this.registry, String(uid)), `${process.pid}\n${folder}`, { flag, mode: 0o600 });
    this.#watch();
  }

  /**
   * Claims `uid` in the host's register; false when another live portal has it, a process of it
   * still runs, or its seat's folder is still there for a portal to take back.
   */
  #claim(uid: number, folder: string): boolean {
    try {
      this.#write(uid, 'wx', folder);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const [holderText = '', heldFolder = ''] = readFileSync(join(this.registry, String(uid)), 'utf8').split('\n');
    const holder = Number(holderText);
    // A claim whose portal is gone is stale only once nothing of that user runs any more and its seat is gone.
    if (holder === process.pid || pidAlive(holder) || processesOf(uid).length || folderOf(heldFolder, uid)) return false;
    this.#write(uid, 'w', folder);
    return true;
  }

  /** Once per portal: the watchdog that ends this portal's seat users' processes when the portal dies (seat-watchdog.ts). */
  #watch(): void {
    if (this.#watching) return;
    this.#watching = true;
    startSeatWatchdog(this.registry);
  }
}

function readFirstLine(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n')[0] ?? '';
  } catch {
    return '';
  }
}

/** Is `folder` (absolute) a seat folder of `uid` still (prepareSeatFolder gave it that group)? */
function folderOf(folder: string, uid: number): boolean {
  if (!folder.startsWith('/')) return false;
  try {
    return statSync(folder).gid === uid;
  } catch {
    return false;
  }
}

/**
 * A seat's folder for a seat user: the folder holding the seats crossable but not listable, the
 * seat's own folder root's and open to the seat's group alone. What the shell itself writes in
 * (its workspace, home, kubeconfig) the runner hands to the user when it opens a shell.
 */
export function prepareSeatFolder(dir: string, user: ShellUser): void {
  mkdirSync(dir, { recursive: true });
  chmodSync(dirname(dir), 0o711);
  chownSync(dir, process.getuid?.() ?? 0, user.gid);
  chmodSync(dir, 0o710);
}

/** The seat user of a seat folder an earlier portal prepared (its group), or null. */
export function seatFolderUser(dir: string, users: SeatUsers): ShellUser | null {
  try {
    const { gid } = statSync(dir);
    return users.owns(gid) ? { uid: gid, gid } : null;
  } catch {
    return null;
  }
}

/** Seat users must reach their folders: every folder above must let other users cross it (o+x). Throws, naming the first that does not. */
export function checkReachable(paths: readonly string[]): void {
  for (const path of paths) {
    let p = resolve(path);
    const above: string[] = [];
    for (;;) {
      above.unshift(p);
      const up = dirname(p);
      if (up === p) break;
      p = up;
    }
    for (const dir of above) {
      let mode: number;
      try {
        mode = statSync(dir).mode;
      } catch {
        break; // made later, by us, with the modes we set
      }
      if (!(mode & 0o001))
        throw new DplabError(`Seat users cannot reach ${path}: ${dir} is closed to other users (mode ${(mode & 0o777).toString(8)}).`, {
          fix: `Keep the portal's state where other users can cross (DPLAB_STATE_DIR=/var/lib/dplab), or open the folder: chmod o+x ${dir}. Or run every seat as yourself: dplab portal --shared-user.`,
        });
    }
  }
}

/** Process ids whose real uid is `uid` (Linux /proc). */
export function processesOf(uid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const real = /^Uid:\s+(\d+)/m.exec(status)?.[1];
      // A zombie is dead already; its parent reaps it.
      if (Number(real) === uid && !/^State:\s+Z/m.test(status)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** SIGKILL every process of `uid` until none is left (a fork loop gets a few rounds); resolves with how many were killed. */
export async function endUserProcesses(uid: number, withinMs = 5_000): Promise<number> {
  let killed = 0;
  const end = Date.now() + withinMs;
  for (;;) {
    const pids = processesOf(uid);
    if (!pids.length) return killed;
    if (Date.now() > end)
      throw new DplabError(`Processes of seat user ${uid} are still running after ${withinMs} ms: ${pids.slice(0, 10).join(', ')}.`);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        killed++;
      } catch {
        // gone meanwhile
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
