/**
 * The one seam for external commands (docker, kind, kubectl, cilium, helm, and commands run
 * inside a node through `docker exec`). Every call has a timeout and an abort signal; a
 * failure is a CommandError carrying the command line, exit code, output and duration; and
 * failures are classified (tool missing, daemon down, cluster missing, …) here and nowhere else.
 */
import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { delimiter } from 'node:path';
import { execa } from 'execa';
import { MIN_KIND_RECOMMENDED } from './versions.ts';
import { DplabError } from './errors.ts';

/**
 * `DPLAB_TIMEOUT_FACTOR` (1 or more) stretches every named timeout below, for a machine that is
 * slow throughout: the IPVS guest under software emulation runs everything several times slower.
 */
export function timeoutFactorFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.DPLAB_TIMEOUT_FACTOR);
  return Number.isFinite(n) && n >= 1 ? n : 1;
}
/** This process' factor, read once at start. */
export const TIMEOUT_FACTOR = timeoutFactorFromEnv();

/** Named timeouts so call sites say what kind of wait they expect. */
export const TIMEOUTS = {
  /** `--version`, `get`, short reads. */
  quick: 15_000 * TIMEOUT_FACTOR,
  /** `kubectl apply`, `docker exec` of a small command. */
  normal: 60_000 * TIMEOUT_FACTOR,
  /** `kubectl wait`, image loads. */
  long: 5 * 60_000 * TIMEOUT_FACTOR,
  /** `kind create cluster` pulls a node image on first use. */
  provision: 15 * 60_000 * TIMEOUT_FACTOR,
} as const;

/** How long a killed command gets to exit after SIGTERM before SIGKILL. */
const FORCE_KILL_AFTER_MS = 2_000;
/** Output kept in an error's details, so one noisy command cannot flood the UI. */
const MAX_DETAIL_CHARS = 8_000;

export interface RunOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Text written to the command's stdin. */
  input?: string;
  /** Extra environment; the runner's own environment is inherited. */
  env?: Record<string, string | undefined>;
  /**
   * Folders searched before PATH, for this command and whatever it starts: a cluster provider's
   * own programs (the sim's kubectl and its `docker exec` shim, a ClusterHandle's `pathFirst`).
   * The runner's own PATH is never changed.
   */
  pathFirst?: readonly string[];
  cwd?: string;
  /** Stream the command's output to ours instead of capturing it (long builds the user watches). */
  inheritOutput?: boolean;
  /** Called with each piece of output (stdout and stderr) as it arrives, besides capturing it: progress of a long command. */
  onOutput?: (text: string) => void;
}

/** A finished command. Results and errors have the same fields. */
export interface CommandResult {
  /** The command line as one readable string, for messages. */
  command: string;
  file: string;
  args: readonly string[];
  /** -1 when the process did not exit by itself (see `signal`). */
  exitCode: number;
  /** The signal that ended the process (`SIGKILL`), when one did. */
  signal?: string;
  stdout: string;
  stderr: string;
  durationMs: number;
}

/** "exit code 2", or "killed by SIGKILL" when a signal ended it: never a bare -1. */
export function howItEnded(r: Pick<CommandResult, 'exitCode' | 'signal'>): string {
  return r.signal ? `killed by ${r.signal}` : `exit code ${r.exitCode}`;
}

export type FailureKind = 'tool-missing' | 'daemon-down' | 'cluster-missing' | 'cluster-unreachable' | 'timeout' | 'aborted' | 'failed';

const INSTALL_HINTS: Record<string, string> = {
  docker: 'Install Docker (https://docs.docker.com/get-docker/) and make sure `docker version` works for your user.',
  kind: `Install kind v${MIN_KIND_RECOMMENDED} or newer: https://kind.sigs.k8s.io/docs/user/quick-start/#installation`,
  kubectl: 'Install kubectl: https://kubernetes.io/docs/tasks/tools/',
  cilium: 'Install the cilium CLI (https://docs.cilium.io/en/stable/gettingstarted/k8s-install-default/#install-the-cilium-cli) or helm.',
  helm: 'Install helm (https://helm.sh/docs/intro/install/) or the cilium CLI.',
  go: 'Install Go 1.25 or newer (https://go.dev/dl/) and put `go` on PATH.',
  openssl: 'Install openssl (`apt-get install openssl`).',
  ip: 'Install iproute2 (`apt-get install iproute2`).',
};

export class CommandError extends DplabError implements CommandResult {
  readonly kind: FailureKind;
  readonly command: string;
  readonly file: string;
  readonly args: readonly string[];
  readonly exitCode: number;
  readonly signal?: string;
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;

  constructor(kind: FailureKind, result: CommandResult, message: string, fix?: string) {
    super(message, { fix, details: describeForDetails(result) });
    this.name = 'CommandError';
    this.kind = kind;
    this.command = result.command;
    this.file = result.file;
    this.args = result.args;
    this.exitCode = result.exitCode;
    this.signal = result.signal;
    this.stdout = result.stdout;
    this.stderr = result.stderr;
    this.durationMs = result.durationMs;
  }
}

function quoteArg(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

function formatCommand(file: string, args: readonly string[]): string {
  return [file, ...args].map(quoteArg).join(' ');
}

function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${Math.round(ms / 1000)} s`;
}

function clip(text: string): string {
  return text.length > MAX_DETAIL_CHARS
    ? `${text.slice(0, MAX_DETAIL_CHARS)}\n… (${text.length - MAX_DETAIL_CHARS} more characters)`
    : text;
}

function describeForDetails(r: CommandResult): string {
  const parts = [`$ ${r.command}`, `${howItEnded(r)} after ${Math.round(r.durationMs)} ms`];
  if (r.stderr.trim()) parts.push(`stderr:\n${clip(r.stderr.trimEnd())}`);
  if (r.stdout.trim()) parts.push(`stdout:\n${clip(r.stdout.trimEnd())}`);
  return parts.join('\n');
}

const DAEMON_DOWN =
  /Cannot connect to the Docker daemon|Is the docker daemon running|error during connect|docker\.sock: connect: (?:no such file|permission denied|connection refused)/i;
const SOCKET_DENIED = /permission denied while trying to connect to the Docker daemon|docker\.sock: connect: permission denied/i;

/** Docker runs, but this user may not use its socket (not in the `docker` group; a workshop seat's own user): a CommandError's message says so. */
export const DOCKER_DENIED = {
  message: 'Docker runs, but this user may not use it: permission denied on its socket.',
  fix: "Add yourself to the `docker` group (`sudo usermod -aG docker $USER`, then log in again) so `docker ps` works without sudo. In a workshop seat's terminal, which runs as the seat's own user without Docker, use Start and Check on the lab page instead.",
} as const;
const DOCKER_NOT_FOUND = /exec: "docker": executable file not found/;
const CLUSTER_MISSING =
  /No such container: dplab-|could not locate any control plane nodes|unknown cluster "dplab-|no nodes found for cluster/i;
const CLUSTER_UNREACHABLE =
  /The connection to the server .* was refused|Unable to connect to the server|dial tcp .*: connect: connection refused|stat .*dplab-\w+\.yaml: no such file/i;

/** Decide what a failed command means. The only place that reads error text for meaning. */
function classifyFailure(
  result: CommandResult,
  extra: { timedOut?: boolean; aborted?: boolean; missing?: boolean; timeoutMs?: number },
): {
  kind: FailureKind;
  message: string;
  fix?: string;
} {
  const tool = result.file;
  if (extra.missing) {
    return {
      kind: 'tool-missing',
      message: `\`${tool}\` was not found on PATH.`,
      fix: INSTALL_HINTS[tool] ?? `Install ${tool} and put it on PATH.`,
    };
  }
  if (extra.aborted) return { kind: 'aborted', message: `\`${result.command}\` was cancelled.` };
  if (extra.timedOut) {
    return {
      kind: 'timeout',
      message: `\`${result.command}\` did not finish within ${formatDuration(extra.timeoutMs ?? result.durationMs)} and was stopped.`,
      fix: 'The command hung. Check that Docker and the cluster respond (`docker ps`, `dplab status`), then try again.',
    };
  }
  const text = `${result.stderr}\n${result.stdout}`;
  // kind (and helm, cilium) shell out to docker; its absence shows up as their error text.
  if (DOCKER_NOT_FOUND.test(text)) {
    return { kind: 'tool-missing', message: 'Docker is not installed: `docker` was not found on PATH.', fix: INSTALL_HINTS.docker };
  }
  if (SOCKET_DENIED.test(text)) return { kind: 'daemon-down', ...DOCKER_DENIED };
  if (DAEMON_DOWN.test(text)) {
    return {
      kind: 'daemon-down',
      message: 'The Docker daemon is not reachable.',
      fix: 'Start Docker (Docker Desktop, or `sudo systemctl start docker` on Linux) and check that `docker ps` works without sudo.',
    };
  }
  if (CLUSTER_MISSING.test(text)) {
    return {
      kind: 'cluster-missing',
      message: 'The lab cluster does not exist (any more).',
      fix: 'Start it again with `dplab up <mode>`, or with Start on a lab page or on the Clusters page (/clusters/).',
    };
  }
  if (CLUSTER_UNREACHABLE.test(text)) {
    return {
      kind: 'cluster-unreachable',
      message: 'The cluster API server is not reachable.',
      fix: 'Check `dplab status`; if the cluster is broken, `dplab down <mode>` then `dplab up <mode>`.',
    };
  }
  const line = tellingLine(result.stderr);
  return {
    kind: 'failed',
    message: `\`${result.command}\` failed (${howItEnded(result)})${line ? `: ${line.slice(0, 300)}` : '.'}`,
  };
}

/**
 * The stderr line that says what went wrong: the last one that starts like an error
 * (`ERROR: failed to create cluster: …` after kind's progress lines), else the first line.
 */
export function tellingLine(stderr: string): string {
  const lines = stderr.split('\n').filter((l) => l.trim());
  const errors = lines.filter((l) => /^\s*(error|fatal)\b/i.test(l));
  return (errors[errors.length - 1] ?? lines[0] ?? '').trim();
}

/** `dirs` in front of `path` (the runner's PATH unless given): what a program run with RunOptions' `pathFirst` searches. */
export function pathWith(dirs: readonly string[] | undefined, path: string | undefined = process.env.PATH): string {
  return [...(dirs ?? []), path].filter(Boolean).join(delimiter);
}

/** The environment execa is given: `env`, and PATH with `pathFirst` in front when there are any (the program is looked up there too). */
function commandEnv(opts: RunOptions): RunOptions['env'] {
  if (!opts.pathFirst?.length) return opts.env;
  return { ...opts.env, PATH: pathWith(opts.pathFirst, opts.env?.PATH) };
}

/**
 * Run a command and return its result, or throw a classified CommandError.
 * Never uses a shell: arguments are passed as they are.
 */
export async function run(file: string, args: readonly string[], opts: RunOptions = {}): Promise<CommandResult> {
  const started = performance.now();
  const proc = execa(file, args, {
    reject: false,
    timeout: opts.timeoutMs ?? TIMEOUTS.normal,
    cancelSignal: opts.signal,
    forceKillAfterDelay: FORCE_KILL_AFTER_MS,
    // Without input, stdin is closed: a tool that would wait for stdin must not hang the runner.
    ...(opts.input === undefined ? { stdin: 'ignore' as const } : { input: opts.input }),
    env: commandEnv(opts),
    cwd: opts.cwd,
    stripFinalNewline: false,
    windowsHide: true,
    ...(opts.inheritOutput ? { stdout: 'inherit' as const, stderr: 'inherit' as const } : {}),
  });
  if (opts.onOutput) {
    const forward = (chunk: Buffer | string) => opts.onOutput?.(chunk.toString());
    proc.stdout?.on('data', forward);
    proc.stderr?.on('data', forward);
  }
  const sub = await proc;
  const result: CommandResult = {
    command: formatCommand(file, args),
    file,
    args: [...args],
    exitCode: typeof sub.exitCode === 'number' ? sub.exitCode : -1,
    ...(sub.signal ? { signal: sub.signal } : {}),
    stdout: typeof sub.stdout === 'string' ? sub.stdout : '',
    stderr: typeof sub.stderr === 'string' ? sub.stderr : '',
    durationMs: performance.now() - started,
  };
  if (!sub.failed) return result;
  const code = (sub as { code?: string }).code;
  const c = classifyFailure(result, {
    timedOut: sub.timedOut,
    aborted: sub.isCanceled,
    missing: code === 'ENOENT',
    timeoutMs: opts.timeoutMs ?? TIMEOUTS.normal,
  });
  throw new CommandError(c.kind, result, c.message, c.fix);
}

/**
 * Something that runs commands: the host, or a kind node through `docker exec`. Checks and
 * terminals depend on this shape, so a node is "just another runner" (as in kind).
 */
export interface CommandRunner {
  run(args: readonly string[], opts?: RunOptions): Promise<CommandResult>;
}

/** A runner that executes inside a kind node container. */
export function nodeRunner(node: string): CommandRunner {
  return { run: (args, opts) => run('docker', ['exec', ...(opts?.input !== undefined ? ['-i'] : []), node, ...args], opts) };
}

/**
 * Run several commands at once; when one fails the others are cancelled rather than left
 * running (and writing) after the caller has moved on.
 */
export async function allOrCancel<T extends readonly unknown[]>(
  signal: AbortSignal | undefined,
  tasks: { [K in keyof T]: (signal: AbortSignal) => Promise<T[K]> },
): Promise<T> {
  const controller = new AbortController();
  const shared = signal ? AbortSignal.any([signal, controller.signal]) : controller.signal;
  return (await Promise.all(
    tasks.map((task) =>
      task(shared).catch((err: unknown) => {
        controller.abort();
        throw err;
      }),
    ),
  )) as unknown as T;
}

/**
 * Start a long-running process that outlives this one (the sim provider's control plane,
 * kube-proxy, kubelet stand-ins): its own session, stdin closed, stdout and stderr appended to
 * `logFile`. Returns its pid; the caller keeps it in a pidfile. Never uses a shell.
 */
export function spawnDetached(
  file: string,
  args: readonly string[],
  opts: { logFile: string; env?: Record<string, string | undefined>; cwd?: string },
): number {
  const fd = openSync(opts.logFile, 'a');
  try {
    const child = spawn(file, [...args], {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { ...process.env, ...opts.env },
      cwd: opts.cwd,
    });
    // A missing executable is reported below (no pid); the later 'error' event must not crash us.
    child.on('error', () => undefined);
    if (child.pid === undefined)
      throw new DplabError(`Could not start \`${formatCommand(file, args)}\`: not found or not executable.`, {
        fix: INSTALL_HINTS[file] ?? `Check that ${file} exists (for the sim components: \`dplab sim-build\`).`,
      });
    child.unref();
    return child.pid;
  } finally {
    closeSync(fd);
  }
}
