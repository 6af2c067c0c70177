/** Docker CLI, daemon and Docker Desktop: one `docker info` call answers all three. */
import { CommandError, run, TIMEOUTS } from '../exec.ts';
import type { Finding, PreflightSystem } from './types.ts';

export interface DockerInfo {
  serverVersion: string;
  operatingSystem: string;
  name: string;
  /** Total memory of the Docker host (the VM on Docker Desktop), bytes. */
  memTotal: number;
  /** True where node IPs on the `kind` network are not routable from this machine. */
  desktop: boolean;
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
export function isDockerDesktop(operatingSystem: string, name: string): boolean {
  return /docker desktop/i.test(operatingSystem) || /^docker-desktop$/i.test(name);
}

/** Node IPs are reachable from the host only with a native Linux engine. */
export function nodeIpsReachableFromHost(info: Pick<DockerInfo, 'desktop'> | undefined, platform: NodeJS.Platform): boolean {
  return platform === 'linux' && !!info && !info.desktop;
}

export async function checkDocker(system: PreflightSystem, signal?: AbortSignal): Promise<DockerCheck> {
  try {
    const r = await run('docker', ['info', '--format', '{{json .}}'], { timeoutMs: TIMEOUTS.quick, signal });
    const raw = JSON.parse(r.stdout) as Record<string, unknown>;
    const info: DockerInfo = {
      serverVersion: String(raw.ServerVersion ?? ''),
      operatingSystem: String(raw.OperatingSystem ?? ''),
      name: String(raw.Name ?? ''),
      memTotal: Number(raw.MemTotal ?? 0),
      desktop: isDockerDesktop(String(raw.OperatingSystem ?? ''), String(raw.Name ?? '')),
    };
    const client = clientVersion(r.stdout);
    const findings: Finding[] = [
      { id: 'docker-cli', title: 'Docker CLI', status: 'ok', detail: client ? `docker ${client}` : 'docker is on PATH' },
      { id: 'docker-daemon', title: 'Docker daemon', status: 'ok', detail: `Docker Engine ${info.serverVersion} on ${info.operatingSystem || 'unknown OS'}` },
      info.desktop || system.platform !== 'linux'
        ? { id: 'docker-desktop', title: 'Node IPs from this machine', status: 'warn', detail: `${info.desktop ? 'Docker Desktop' : `Docker on ${system.platform}`} runs in a VM, so node IPs are not reachable from this machine.`, fix: DOCKER_DESKTOP_FIX }
        : { id: 'docker-desktop', title: 'Node IPs from this machine', status: 'ok', detail: 'Native Linux engine: node IPs are reachable from this machine.' },
    ];
    return { findings, info };
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    if (err.kind === 'aborted') throw err;
    if (err.kind === 'tool-missing') {
      return {
        findings: [
          { id: 'docker-cli', title: 'Docker CLI', status: 'fail', detail: 'Docker is not installed: `docker` was not found on PATH.', fix: err.fix },
          { id: 'docker-daemon', title: 'Docker daemon', status: 'fail', detail: 'Not checked: needs the Docker CLI.', fix: err.fix },
        ],
      };
    }
    const client = clientVersion(err.stdout);
    const cli: Finding = { id: 'docker-cli', title: 'Docker CLI', status: 'ok', detail: client ? `docker ${client}` : 'docker is on PATH' };
    if (err.kind === 'daemon-down') {
      return { findings: [cli, { id: 'docker-daemon', title: 'Docker daemon', status: 'fail', detail: 'Docker is not running: the docker CLI is installed, but no Docker daemon (engine) answers.', fix: DAEMON_FIX }] };
    }
    return {
      findings: [
        cli,
        { id: 'docker-daemon', title: 'Docker daemon', status: 'fail', detail: `\`docker info\` failed: ${err.message}`, fix: err.fix ?? 'Check that `docker info` works for your user (on Linux: add yourself to the `docker` group).' },
      ],
    };
  }
}
