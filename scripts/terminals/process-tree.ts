/**
 * Ending a shell means ending everything it started: the shell leads its own session (the pty
 * makes it so), and job control gives background jobs their own process groups inside that
 * session, so we signal every group in the session, not just the shell's.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/** Grace period between SIGHUP and SIGKILL. */
const KILL_GRACE_MS = 1_500;

/** Process group ids of all processes in session `sid` (Linux /proc; elsewhere just the leader's group). */
function sessionGroups(sid: number): number[] {
  const groups = new Set<number>([sid]);
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [...groups];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = statFields(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      if (Number(fields[3]) === sid) groups.add(Number(fields[2]));
    } catch {
      // the process ended while we looked
    }
  }
  return [...groups];
}

/** Fields after the parenthesised command name of a /proc/<pid>/stat line: state ppid pgrp session … */
function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** `sessionGroups`, reading /proc off the event loop. */
async function sessionGroupsAsync(sid: number): Promise<number[]> {
  const groups = new Set<number>([sid]);
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [...groups];
  }
  await Promise.all(
    entries
      .filter((e) => /^\d+$/.test(e))
      .map(async (entry) => {
        try {
          const fields = statFields(await readFile(`/proc/${entry}/stat`, 'utf8'));
          if (Number(fields[3]) === sid) groups.add(Number(fields[2]));
        } catch {
          // the process ended while we looked
        }
      }),
  );
  return [...groups];
}

/**
 * The groups in session `sid` of its leader and everything under it, walking
 * /proc/<pid>/task/<tid>/children: a few reads instead of every process on the host. Null where
 * the kernel does not keep that list.
 */
function descendantGroups(sid: number): number[] | null {
  const groups = new Set<number>([sid]);
  const queue = [sid];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
      const fields = statFields(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      if (Number(fields[3]) === sid) groups.add(Number(fields[2]));
    } catch {
      continue; // ended while we looked
    }
    for (const task of tasks) {
      try {
        for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' '))
          if (/^\d+$/.test(child)) queue.push(Number(child));
      } catch (err) {
        if (pid === sid && (err as NodeJS.ErrnoException).code === 'ENOENT' && task === String(sid)) return null;
      }
    }
  }
  return [...groups];
}

export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signalGroups(groups: number[], signal: NodeJS.Signals): void {
  for (const g of groups) {
    try {
      process.kill(-g, signal);
    } catch {
      // already gone
    }
  }
}

/** How often a closing session is looked at to see whether everything in it has gone. */
const GONE_POLL_MS = 50;

/**
 * SIGHUP every group of the session now, SIGKILL whatever is left after the grace period.
 * Resolves as soon as every group has gone (a shell that obeys SIGHUP ends in milliseconds),
 * so the runner's count of open shells is right when it matters, for the terminal cap.
 *
 * The groups are found under the shell (descendantGroups), and while it waits it asks only
 * those (one `kill(-g, 0)` each); the whole of /proc is read, off the event loop, only once they
 * have all gone (for a group an orphaned job started) and at the end of the grace period.
 * Reading all of /proc on the event loop every 50 ms for each closing shell kept the runner
 * busy under churn (issue 36, item 8: a new shell's first prompt held back by seconds).
 */
export function endSession(sid: number, graceMs = KILL_GRACE_MS): Promise<void> {
  let groups = descendantGroups(sid) ?? sessionGroups(sid);
  signalGroups(groups, 'SIGHUP');
  signalGroups(groups, 'SIGCONT');
  return new Promise((resolve) => {
    const started = Date.now();
    const look = async () => {
      if (Date.now() - started >= graceMs) {
        signalGroups([...new Set([...groups, ...(await sessionGroupsAsync(sid))])].filter(groupAlive), 'SIGKILL');
        return resolve();
      }
      groups = groups.filter(groupAlive);
      if (groups.length === 0) {
        // Gone, unless the session holds a group we did not see under the shell.
        groups = (await sessionGroupsAsync(sid)).filter(groupAlive);
        if (groups.length === 0) return resolve();
        signalGroups(groups, 'SIGHUP');
        signalGroups(groups, 'SIGCONT');
      }
      setTimeout(() => void look(), GONE_POLL_MS).unref();
    };
    setTimeout(() => void look(), GONE_POLL_MS).unref();
  });
}
