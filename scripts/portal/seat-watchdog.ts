/**
 * Seat processes end with the portal, even when it is killed with SIGKILL (issue 36: a killed
 * portal left 30 root runners serving, and a learner's leftover process could take the portal's
 * port and collect tokens). Two parts: each runner (and each seat shell, terminals/shell-user.ts)
 * gets a parent-death signal, so it dies with whoever started it; and this watchdog, a small shell
 * in a session of its own, reads a pipe from the portal, which only the portal's death closes,
 * and then kills every process of each seat user the dead portal held in the host's register
 * (seat-users.ts): what a learner left running with `nohup … &` or `setsid` included.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { DplabError } from '../base/errors.ts';

const PKILL = ['/usr/bin/pkill', '/bin/pkill'];

/** `$1` the register folder, `$2` the portal's pid; its stdin is the pipe. */
const SCRIPT = `cat >/dev/null
for f in "$1"/*; do
  [ "$(head -n 1 "$f" 2>/dev/null)" = "$2" ] || continue
  uid=\${f##*/}
  i=0
  while ${'"$3"'} -KILL -U "$uid" && [ $i -lt 200 ]; do i=$((i+1)); sleep 0.05; done
done`;

export function startSeatWatchdog(registry: string): void {
  const pkill = PKILL.find((p) => existsSync(p));
  if (!pkill)
    throw new DplabError("Seat users' processes are ended with pkill when the portal dies, and it is not installed.", {
      fix: 'Install procps (Debian: apt-get install procps).',
    });
  const child = spawn('/bin/sh', ['-c', SCRIPT, 'dplab-seat-watchdog', registry, String(process.pid), pkill], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  // Neither the watchdog nor its pipe keeps the portal's event loop alive; the pipe stays open until the portal exits.
  child.unref();
  (child.stdin as unknown as { unref?: () => void }).unref?.();
}
