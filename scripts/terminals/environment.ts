/**
 * The environment a lab shell starts with: KUBECONFIG of the lab's cluster (never the user's
 * ~/.kube/config), `dplab` on PATH (messages in the page tell learners to run it), and a short
 * prompt with the mode and the folder, layered over the user's own shell setup.
 */
import { mkdirSync } from 'node:fs';
import { writeFileIfChanged } from '../base/atomic-file.ts';
import { basename, delimiter, join } from 'node:path';
import { kubeconfigPath, clusterName, type Mode } from '../catalogue/modes.ts';
import { projectRoot, stateDir, workspaceDir } from '../base/paths.ts';
import { dropTo, handOver, ownFolder, shellUser, SHELL_USER_VAR } from './shell-user.ts';
import { SHELL_PROMPT_OSC, SHELL_READY_OSC } from '../wire/terminal.ts';
import { SEAT_CGROUP_VAR } from './seat-cgroup.ts';
import { seatShellEnv } from './seat-env.ts';

export interface ShellLaunch {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** The shell itself when `file` is a wrapper that starts it (setpriv, for a seat's own user). */
  shell?: string;
  /** How the shell's start shows: the user's rc file it reads first, and whether it marks its first prompt. */
  startup: ShellStartup;
}

export interface ShellStartup {
  /** `~/.bashrc` or `~/.zshrc` while the learner's own rc file is read (null with DPLAB_SHELL_NORC=1). */
  rc: string | null;
  /** True when the rc ends by writing the SHELL_READY_OSC sequence, just before the first prompt. */
  marker: boolean;
}

function userShell(): string {
  const fromEnv = process.env.DPLAB_SHELL ?? process.env.SHELL;
  return fromEnv && fromEnv.startsWith('/') ? fromEnv : '/bin/bash';
}

function promptTag(mode: Mode | null): string {
  return mode ? `(${mode})` : '(dplab)';
}

/**
 * The folder with the `dplab` shim put first on every runner terminal's PATH: it runs this
 * checkout's CLI with the runner's own Node, so it works without `npm link`.
 */
function shimDir(): string {
  const dir = join(stateDir(), 'bin');
  mkdirSync(dir, { recursive: true });
  // Written once, not per shell: a shell running it while it is rewritten read it truncated, and
  // under churn these writes were a good part of the runner's busy time (issue 36, item 8).
  writeFileIfChanged(
    join(dir, 'dplab'),
    `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(join(projectRoot, 'scripts', 'dplab.mjs'))} "$@"\n`,
    {
      mode: 0o755,
    },
  );
  return dir;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** True unless DPLAB_SHELL_NORC=1: a lab shell reads the learner's own ~/.bashrc or ~/.zshrc first. */
function readsOwnRc(): boolean {
  return process.env.DPLAB_SHELL_NORC !== '1';
}

/**
 * Without its cluster, a lab shell's kubectl would fall back to localhost:8080 and print raw
 * connection errors: while KUBECONFIG is still the lab's own and its file is missing, kubectl says
 * which cluster is missing and how to start it instead (bash and zsh read the same function).
 */
function kubectlGuard(mode: Mode): string {
  const kc = shellQuote(kubeconfigPath(mode));
  const lines = [
    `kubectl: the ${mode} cluster (${clusterName(mode)}) is not running, so there is no cluster to talk to.`,
    `Start it with \`dplab up ${mode}\` here, or Start at the top of the lab page.`,
    'If it cannot start (no Docker, no kind), `dplab doctor` says what this machine needs.',
  ];
  return [
    'kubectl() {',
    `  if [ "$KUBECONFIG" = ${kc} ] && [ ! -f ${kc} ]; then`,
    `    printf '%s\\n' ${lines.map(shellQuote).join(' ')} >&2`,
    '    return 1',
    '  fi',
    '  command kubectl "$@"',
    '}',
    '',
  ].join('\n');
}

/**
 * Small rc files that source the user's own (unless DPLAB_SHELL_NORC=1: a clean shell, which
 * the tests use and a learner whose ~/.bashrc is slow can ask for) and then set a short prompt:
 * the mode and the current folder's name, never the absolute path (it wrapped every command).
 * Last, they write SHELL_READY_OSC, so the page knows the prompt is next (terminal-element.ts).
 */
function writeRcFiles(mode: Mode | null, bin: string): { bashrc: string; zdotdir: string } {
  const dir = join(stateDir(), 'shell', mode ?? 'none');
  mkdirSync(dir, { recursive: true });
  const tag = promptTag(mode);
  const own = readsOwnRc();
  // A ~/.bashrc that rebuilds PATH must not hide dplab.
  const path = `case ":$PATH:" in *":${bin}:"*) ;; *) PATH=${shellQuote(bin)}:"$PATH" ;; esac\n`;
  const guard = mode ? kubectlGuard(mode) : '';
  const ready = `if [ -t 1 ]; then printf '\\033]${SHELL_READY_OSC};\\007'; fi\n`;
  // Before every prompt, once, SHELL_PROMPT_OSC: the page knows a command is done
  // (site/client/run-queue.ts). From PROMPT_COMMAND and precmd, after the learner's own, and not
  // in the prompt itself: readline redraws the prompt (a resize does), which would mark it again.
  const mark = `printf '\\033]${SHELL_PROMPT_OSC};\\007'`;
  const bashMark = `PROMPT_COMMAND="\${PROMPT_COMMAND:+$PROMPT_COMMAND\n}${mark}"\n`;
  const zshMark = `__dplab_prompt_mark() { ${mark}; }\nprecmd_functions+=(__dplab_prompt_mark)\n`;
  const bashrc = join(dir, 'bashrc');
  writeFileIfChanged(
    bashrc,
    `${own ? '[ -f ~/.bashrc ] && . ~/.bashrc\n' : ''}${path}${guard}PS1='\\[\\e[36m\\]${tag}\\[\\e[0m\\] \\W \\$ '\n${bashMark}${ready}`,
  );
  const zdotdir = join(dir, 'zsh');
  writeFileIfChanged(
    join(zdotdir, '.zshrc'),
    `${own ? '[ -f ~/.zshrc ] && ZDOTDIR=~ . ~/.zshrc\n' : ''}${path}${guard}PROMPT='%F{cyan}${tag}%f %1~ %# '\n${zshMark}${ready}`,
  );
  return { bashrc, zdotdir };
}

/** `pathFirst`: the cluster handle's own programs (the sim's kubectl and `docker exec` shim), after dplab's and before the rest of PATH. */
function baseEnv(mode: Mode | null, bin: string, pathFirst: readonly string[] = []): Record<string, string> {
  // A workshop seat's shell starts from an allow-list (seat-env.ts); a runner of one's own passes
  // the user's environment on, minus the runner's own secrets.
  const env: Record<string, string> = process.env.DPLAB_SEAT ? seatShellEnv(process.env, [SHELL_USER_VAR, SEAT_CGROUP_VAR]) : {};
  if (!process.env.DPLAB_SEAT) for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  delete env.DPLAB_TOKEN;
  delete env[SHELL_USER_VAR];
  env.TERM = 'xterm-256color';
  env.COLORTERM = 'truecolor';
  env.DPLAB = '1';
  env.PATH = [bin, ...pathFirst, env.PATH].filter(Boolean).join(delimiter);
  if (mode) {
    env.KUBECONFIG = kubeconfigPath(mode);
    env.DPLAB_MODE = mode;
    env.DPLAB_CLUSTER = clusterName(mode);
  } else {
    // A shell without a lab must not act on whatever cluster ~/.kube/config points at by accident.
    delete env.KUBECONFIG;
  }
  return env;
}

/** A shell inside a cluster node: the argv comes from the cluster handle (docker exec under kind). */
export function nodeShellLaunch(mode: Mode, argv: readonly string[], pathFirst?: readonly string[]): ShellLaunch {
  const cwd = workspaceDir();
  mkdirSync(cwd, { recursive: true });
  const [file, ...args] = argv;
  return { file: file!, args, cwd, env: baseEnv(mode, shimDir(), pathFirst), startup: { rc: null, marker: false } };
}

export function shellLaunch(mode: Mode | null, pathFirst?: readonly string[]): ShellLaunch {
  const launch = ownShellLaunch(mode, pathFirst);
  const user = shellUser();
  if (!user) return launch;
  // A seat of the portal's local backend: the shell runs as the seat's own user, in a workspace
  // and home only it can use, with the kubeconfig handed to it (shell-user.ts).
  const prefix = dropTo(user);
  ownFolder(launch.cwd, user);
  const home = join(stateDir(), 'home');
  ownFolder(home, user);
  if (mode) handOver(kubeconfigPath(mode), user);
  const env = { ...launch.env, HOME: home, USER: `uid${user.uid}`, LOGNAME: `uid${user.uid}` };
  return {
    file: prefix[0]!,
    args: [...prefix.slice(1), launch.file, ...launch.args],
    cwd: launch.cwd,
    env,
    shell: launch.file,
    startup: launch.startup,
  };
}

/** The shell as the runner's own user. */
function ownShellLaunch(mode: Mode | null, pathFirst?: readonly string[]): ShellLaunch {
  const cwd = workspaceDir();
  mkdirSync(cwd, { recursive: true });
  const file = userShell();
  const bin = shimDir();
  const env = baseEnv(mode, bin, pathFirst);
  const { bashrc, zdotdir } = writeRcFiles(mode, bin);
  const name = basename(file);
  const own = readsOwnRc();
  if (name === 'bash') return { file, args: ['--rcfile', bashrc, '-i'], cwd, env, startup: { rc: own ? '~/.bashrc' : null, marker: true } };
  if (name === 'zsh')
    return { file, args: ['-i'], cwd, env: { ...env, ZDOTDIR: zdotdir }, startup: { rc: own ? '~/.zshrc' : null, marker: true } };
  env.PS1 = `${promptTag(mode)} $ `;
  return { file, args: ['-i'], cwd, env, startup: { rc: null, marker: false } };
}
