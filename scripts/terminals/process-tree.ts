/**
 * Ending a shell means ending everything it started: the shell leads its own session (the pty
 * makes it so), and job control gives background jobs their own process groups inside that
 * session, so we signal every group in the session, not just the shell's.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Grace period between SIGHUP and SIGKILL. */
export const KILL_GRACE_MS = 1_500;

/** Process group ids of all processes in session `sid` (Linux /proc; elsewhere just the leader's group). */
export function sessionGroups(sid: number): number[] {
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
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command name: state ppid pgrp session …
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[3]) === sid) groups.add(Number(fields[2]));
    } catch {
      // the process ended while we looked
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
 */
export function endSession(sid: number, graceMs = KILL_GRACE_MS): Promise<void> {
  const groups = sessionGroups(sid);
  signalGroups(groups, 'SIGHUP');
  signalGroups(groups, 'SIGCONT');
  return new Promise((resolve) => {
    const started = Date.now();
    const look = () => {
      const left = [...new Set([...groups, ...sessionGroups(sid)])].filter(groupAlive);
      if (left.length === 0) return resolve();
      if (Date.now() - started >= graceMs) {
        signalGroups(left, 'SIGKILL');
        return resolve();
      }
      setTimeout(look, GONE_POLL_MS).unref();
    };
    setTimeout(look, GONE_POLL_MS).unref();
  });
}
