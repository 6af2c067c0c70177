/**
 * Learner shells as a Unix user of their own. The portal's local backend gives each seat a uid
 * and gid (DPLAB_SHELL_USER=<uid>:<gid> in the seat runner's environment) and runs the runner as
 * root, because the runner drives Docker or the sim's network namespaces. The shells it opens
 * for the learner drop that: `setpriv` switches to the seat's uid and gid, clears root's
 * supplementary groups (node-pty's own uid option keeps them) and sets no_new_privs, so sudo
 * and other set-uid programs cannot take root back. What the shell works with is handed to
 * that user (its workspace, a home folder, the cluster's kubeconfig); the rest of the seat's
 * folder stays root's, and other seats' folders are closed to it (local-backend.ts).
 *
 * Node shells are not switched: they are `docker exec` (or `ip netns exec`) into a node, which
 * is root by nature (see the portal section of ARCHITECTURE.md).
 */
import { chmodSync, chownSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DplabError } from '../base/errors.ts';
import { run, type CommandResult, type RunOptions } from '../base/exec.ts';
import { stateDir } from '../base/paths.ts';
import { enterArgv, SEAT_CGROUP_VAR, seatCgroupProcs } from './seat-cgroup.ts';
import { seatShellEnv } from './seat-env.ts';

export interface ShellUser {
  uid: number;
  gid: number;
}

export const SHELL_USER_VAR = 'DPLAB_SHELL_USER';

const SETPRIV_PATHS = ['/usr/bin/setpriv', '/bin/setpriv'];
const PRLIMIT_PATHS = ['/usr/bin/prlimit', '/bin/prlimit'];

/**
 * What one seat's user may use, as rlimits set on everything it runs (a shell, a solution, a
 * lab-file write): processes (RLIMIT_NPROC counts every process of the uid, so a fork bomb stops
 * at this many for the whole seat) and address space per process (RLIMIT_AS). Seat users have
 * their own uids, so one seat's count is never another's.
 */
export const SEAT_LIMITS = { processes: 512, addressSpaceBytes: 4 * 1024 ** 3 } as const;

/** The seat's shell user from DPLAB_SHELL_USER, or null when shells run as the runner's own user. */
export function shellUser(env: NodeJS.ProcessEnv = process.env): ShellUser | null {
  const text = env[SHELL_USER_VAR];
  if (text === undefined || text === '') return null;
  const m = /^(\d{1,10}):(\d{1,10})$/.exec(text);
  const uid = Number(m?.[1]);
  const gid = Number(m?.[2]);
  if (!m || uid <= 0 || gid <= 0 || uid > 0xfffffffe || gid > 0xfffffffe)
    throw new DplabError(`${SHELL_USER_VAR} must be <uid>:<gid> of a user other than root, got "${text.slice(0, 40)}".`);
  return { uid, gid };
}

/**
 * The argv prefix that runs a program as `user` with no way back to root: the one place every
 * process of a seat's user starts from. It enters the seat's cgroup(s) first, as root
 * (`cgroup`: the runner's DPLAB_SEAT_CGROUP, seat-cgroup.ts), then sets the rlimits and drops.
 */
export function dropTo(user: ShellUser, cgroup: readonly string[] = seatCgroupProcs()): string[] {
  if (process.getuid?.() !== 0)
    throw new DplabError(`${SHELL_USER_VAR} is set, but the runner is not root, so it cannot switch a shell to uid ${user.uid}.`, {
      fix: 'Run the portal as root for a Unix user per seat, or leave DPLAB_SHELL_USER unset.',
    });
  const setpriv = SETPRIV_PATHS.find((p) => existsSync(p));
  if (!setpriv)
    throw new DplabError('A seat shell needs setpriv to switch to its own user, and it is not installed.', {
      fix: 'Install util-linux (Debian: apt-get install util-linux).',
    });
  const prlimit = PRLIMIT_PATHS.find((p) => existsSync(p));
  if (!prlimit)
    throw new DplabError("A seat's processes need prlimit for their process and memory limits, and it is not installed.", {
      fix: 'Install util-linux (Debian: apt-get install util-linux).',
    });
  return [
    ...enterArgv(cgroup),
    prlimit,
    `--nproc=${SEAT_LIMITS.processes}`,
    `--as=${SEAT_LIMITS.addressSpaceBytes}`,
    '--',
    setpriv,
    `--reuid=${user.uid}`,
    `--regid=${user.gid}`,
    '--clear-groups',
    '--no-new-privs',
    // A shell whose runner is gone (killed, even with SIGKILL) goes too.
    '--pdeathsig=KILL',
    '--',
  ];
}

/** A folder that only `user` may use (made if missing; taken over if it exists). */
export function ownFolder(dir: string, user: ShellUser): void {
  mkdirSync(dir, { recursive: true });
  chownSync(dir, user.uid, user.gid);
  chmodSync(dir, 0o700);
}

/** A file the runner wrote (a kubeconfig) handed to `user`, readable by it alone; nothing if it is not there. */
export function handOver(file: string, user: ShellUser): void {
  try {
    chownSync(file, user.uid, user.gid);
    chmodSync(file, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Runs a command as `user` (a seat's own), for everything that touches the seat's workspace: the
 * kernel then checks every path it opens as the learner's, so a symbolic link the learner planted
 * (to a root-owned file, to another seat's) leads nowhere the learner could not reach already, at
 * any moment, with no check-then-use race. Its environment is a seat shell's (seat-env.ts), never
 * the runner's own (its token), with `extra` on top and the seat's home.
 */
export async function runAsUser(
  user: ShellUser,
  file: string,
  args: readonly string[],
  opts: Omit<RunOptions, 'env'> & { extra?: Record<string, string> } = {},
): Promise<CommandResult> {
  const prefix = dropTo(user);
  const home = join(stateDir(), 'home');
  ownFolder(home, user);
  const env: Record<string, string | undefined> = {};
  // execa adds the runner's own environment: every name of it not allowed is taken out again.
  for (const k of Object.keys(process.env)) env[k] = undefined;
  Object.assign(env, seatShellEnv(process.env, [SHELL_USER_VAR, SEAT_CGROUP_VAR]), {
    HOME: home,
    USER: `uid${user.uid}`,
    LOGNAME: `uid${user.uid}`,
  });
  Object.assign(env, opts.extra);
  const { extra: _extra, ...rest } = opts;
  return run(prefix[0]!, [...prefix.slice(1), file, ...args], { ...rest, env });
}

/** Writes `files` (name → content) into `dir` (made if missing) as `user`: see runAsUser. A link in the way is replaced, never followed. */
export async function writeAsUser(user: ShellUser, dir: string, files: ReadonlyMap<string, string>): Promise<void> {
  // `rm -f` drops a link the learner put in the file's place (their own entry); were it put back
  // at once, `cat >` follows it with the learner's rights only.
  const script = 'umask 077; mkdir -p -- "$1" && rm -f -- "$1/$2" && cat > "$1/$2"';
  for (const [name, content] of files)
    await runAsUser(user, '/bin/sh', ['-c', script, 'sh', dir, name], { input: content }).catch((err: Error) => {
      throw new DplabError(`Could not write ${name} into ${dir} as the seat's user: ${err.message.slice(0, 300)}`, { cause: err });
    });
}
