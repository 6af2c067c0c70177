/** Docker CLI, daemon and Docker Desktop: one `docker info` call answers all three. */
import { CommandError, DOCKER_DENIED, run, TIMEOUTS } from '../base/exec.ts';
import type { Finding, PreflightSystem } from './types.ts';

export interface DockerInfo {
  serverVersion: string;
  operatingSystem: string;
  name: string;
  /** Total memory of the Docker host (the VM on Docker Desktop), bytes. */
  memTotal: number;
  /** True where node IPs on the `kind` network are not routable from this machine. */
  desktop: boolean;
  /** Rootless Docker (`name=rootless` in SecurityOptions): the engine's network lives in its own namespace. */
  rootless: boolean;
  /** The Docker host's kernel ("6.8.0-45-generic"): kind nodes share it. Empty when not reported. */
  kernelVersion: string;
  /** "1" or "2" (empty when not reported). */
  cgroupVersion: string;
  /** Containers get a private cgroup namespace by default (`name=cgroupns` in SecurityOptions). */
  cgroupns: boolean;
  /** The engine runs on another machine (`DOCKER_HOST=tcp://…` or `ssh://…`): its kernel and its node network are not this machine's. */
  remote: boolean;
}

/** `DOCKER_HOST` names another machine (tcp:// or ssh://), not a local socket. */
export function isRemoteDockerHost(value: string | undefined): boolean {
  return !!value && /^(tcp|ssh|https?):\/\//.test(value);
}

export interface DockerCheck {
  findings: Finding[];
  /** Present when the daemon answered. */
  info?: DockerInfo;
}

const DAEMON_FIX =
  'Start Docker: open Docker Desktop, or on Linux run `sudo systemctl start docker` (and add yourself to the `docker` group so `docker ps` works without sudo). If this machine has no Docker Engine at all, install one: https://docs.docker.com/engine/install/ (or Docker Desktop).';

/** `docker info` prints the client part even when the daemon is away. */
function clientVersion(stdout: string): string {
  try {
    return String((JSON.parse(stdout) as { ClientInfo?: { Version?: string } }).ClientInfo?.Version ?? '');
  } catch {
    return '';
  }
}

const DOCKER_DESKTOP_FIX =
  'Nothing to install: the course reaches nodes through a helper container on the `kind` network instead. On Linux, Docker Engine (not Desktop) lets you reach node IPs directly.';

/** Docker Desktop runs the engine in a VM: the `kind` bridge lives there, not on this machine. */
function isDockerDesktop(operatingSystem: string, name: string): boolean {
  return /docker desktop/i.test(operatingSystem) || /^docker-desktop$/i.test(name);
}

/**
 * Node IPs are reachable from the host only with a native, rootful Linux engine: Docker Desktop
 * keeps the `kind` bridge in its VM, rootless Docker in the network namespace of its RootlessKit.
 */
export function nodeIpsReachableFromHost(
  info: (Pick<DockerInfo, 'desktop' | 'rootless'> & Partial<Pick<DockerInfo, 'remote'>>) | undefined,
  platform: NodeJS.Platform,
): boolean {
  return platform === 'linux' && !!info && !info.desktop && !info.rootless && !info.remote;
}

const ROOTLESS_FIX =
  'Nothing to install: the course reaches nodes through a helper container on the `kind` network. (kind documents rootless Docker as supported with cgroup v2 and delegated controllers: https://kind.sigs.k8s.io/docs/user/rootless/.)';

/** `docker info` fields that say the daemon did not answer although the CLI exited 0 (Docker CLI before 28.1). */
function serverErrors(raw: Record<string, unknown>): string[] {
  const errors = Array.isArray(raw.ServerErrors) ? raw.ServerErrors.map(String).filter(Boolean) : [];
  if (errors.length === 0 && String(raw.ServerVersion ?? '') === '') errors.push('`docker info` reported no server version');
  return errors;
}

function securityOption(raw: Record<string, unknown>, name: string): boolean {
  const opts = Array.isArray(raw.SecurityOptions) ? raw.SecurityOptions.map(String) : [];
  return opts.some((o) => o.split(',').includes(`name=${name}`));
}

function reachability(info: DockerInfo, platform: NodeJS.Platform): Finding {
  const base = { id: 'docker-desktop', title: 'Node IPs from this machine' };
  if (info.desktop || platform !== 'linux') {
    return {
      ...base,
      status: 'warn',
      detail: `${info.desktop ? 'Docker Desktop' : `Docker on ${platform}`} runs in a VM, so node IPs are not reachable from this machine.`,
      fix: DOCKER_DESKTOP_FIX,
    };
  }
  if (info.remote) {
    return {
      ...base,
      status: 'warn',
      detail: `The engine runs on another machine (DOCKER_HOST=${process.env.DOCKER_HOST}), so node IPs are not reachable from this one unless that machine routes them.`,
      fix: "Nothing to install: the course reaches nodes through a helper container on the `kind` network. Where this machine has a route to the engine's `kind` network, DPLAB_PROBE_FROM=host sends probes directly.",
    };
  }
  if (info.rootless) {
    return {
      ...base,
      status: 'warn',
      detail: 'Rootless Docker keeps its networks in its own network namespace, so node IPs are not reachable from this machine.',
      fix: ROOTLESS_FIX,
    };
  }
  return { ...base, status: 'ok', detail: 'Native Linux engine: node IPs are reachable from this machine.' };
}

/** The two findings every Docker check reports, whatever `docker info` did. */
const CLI = { id: 'docker-cli', title: 'Docker CLI' } as const;
const DAEMON = { id: 'docker-daemon', title: 'Docker daemon' } as const;

/** The CLI answered (whatever the daemon did): its version when `docker info` printed one. */
function cliFinding(stdout: string): Finding {
  const client = clientVersion(stdout);
  return { ...CLI, status: 'ok', detail: client ? `docker ${client}` : 'docker is on PATH' };
}

/** No daemon answers; `reason` is what the CLI said of it, when it said something. */
function daemonDown(reason?: string): Finding {
  const said = reason ? ` (${reason.slice(0, 200)})` : '';
  return {
    ...DAEMON,
    status: 'fail',
    detail: `Docker is not running: the docker CLI is installed, but no Docker daemon (engine) answers${said}.`,
    fix: DAEMON_FIX,
  };
}

export async function checkDocker(system: PreflightSystem, signal?: AbortSignal): Promise<DockerCheck> {
  try {
    const r = await run('docker', ['info', '--format', '{{json .}}'], { timeoutMs: TIMEOUTS.quick, signal });
    const raw = JSON.parse(r.stdout) as Record<string, unknown>;
    const cli = cliFinding(r.stdout);
    // Before Docker 28.1 the CLI exits 0 with the daemon away and says so only in these fields.
    const down = serverErrors(raw);
    if (down.length) return { findings: [cli, daemonDown(down[0])] };
    const info: DockerInfo = {
      serverVersion: String(raw.ServerVersion ?? ''),
      operatingSystem: String(raw.OperatingSystem ?? ''),
      name: String(raw.Name ?? ''),
      memTotal: Number(raw.MemTotal ?? 0),
      desktop: isDockerDesktop(String(raw.OperatingSystem ?? ''), String(raw.Name ?? '')),
      rootless: securityOption(raw, 'rootless'),
      kernelVersion: String(raw.KernelVersion ?? ''),
      cgroupVersion: String(raw.CgroupVersion ?? ''),
      cgroupns: securityOption(raw, 'cgroupns'),
      remote: isRemoteDockerHost(process.env.DOCKER_HOST),
    };
    const findings: Finding[] = [
      cli,
      {
        ...DAEMON,
        status: 'ok',
        detail: `Docker Engine ${info.serverVersion} on ${info.operatingSystem || 'unknown OS'}${info.rootless ? ' (rootless)' : ''}${info.remote ? ` (on ${info.name || 'another machine'})` : ''}`,
      },
      reachability(info, system.platform),
    ];
    return { findings, info };
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    if (err.kind === 'aborted') throw err;
    if (err.kind === 'tool-missing') {
      return {
        findings: [
          { ...CLI, status: 'fail', detail: 'Docker is not installed: `docker` was not found on PATH.', fix: err.fix },
          { ...DAEMON, status: 'fail', detail: 'Not checked: needs the Docker CLI.', fix: err.fix },
        ],
      };
    }
    const cli = cliFinding(err.stdout);
    if (err.kind === 'daemon-down' && err.message === DOCKER_DENIED.message)
      return { findings: [cli, { ...DAEMON, status: 'fail', detail: DOCKER_DENIED.message, fix: DOCKER_DENIED.fix }] };
    if (err.kind === 'daemon-down') return { findings: [cli, daemonDown()] };
    return {
      findings: [
        cli,
        {
          ...DAEMON,
          status: 'fail',
          detail: `\`docker info\` failed: ${err.message}`,
          fix: err.fix ?? 'Check that `docker info` works for your user (on Linux: add yourself to the `docker` group).',
        },
      ],
    };
  }
}
