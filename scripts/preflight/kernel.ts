/**
 * Host kernel settings kind nodes depend on (they share the Docker host's kernel): inotify
 * limits for many kubelets, and what each mode's record asks in `host` (scripts/catalogue/modes.ts):
 * kernel modules (IPVS's), a kernel release (Cilium's, nftables'), and cgroup v2 with private
 * cgroup namespaces (Cilium's socket load balancer).
 */
import { modeRecord, unreachable, type Mode, type ModeRecord } from '../catalogue/modes.ts';
import { compareVersions } from '../base/versions.ts';
import type { DockerInfo } from './docker.ts';
import type { Finding, PreflightSystem } from './types.ts';

/** kind's known-issues page: "Pod errors due to too many open files". */
const MIN_INOTIFY_WATCHES = 524_288;
const MIN_INOTIFY_INSTANCES = 512;

const INOTIFY_FIX =
  `sudo sysctl fs.inotify.max_user_watches=${MIN_INOTIFY_WATCHES} fs.inotify.max_user_instances=${MIN_INOTIFY_INSTANCES} ` +
  `(to keep it after a reboot, put both settings in /etc/sysctl.d/99-kind.conf)`;

function readNumber(system: PreflightSystem, path: string): number | undefined {
  const n = Number.parseInt(system.readText(path)?.trim() ?? '', 10);
  return Number.isFinite(n) ? n : undefined;
}

export function checkInotify(system: PreflightSystem, docker?: DockerInfo): Finding {
  const base = { id: 'inotify', title: 'inotify limits' };
  if (system.platform !== 'linux' || docker?.desktop) {
    return { ...base, status: 'ok', detail: 'Not checked: Docker runs in a VM whose kernel settings Docker manages.' };
  }
  if (docker?.remote)
    return {
      ...base,
      status: 'ok',
      detail: `Not checked: the nodes run on the engine's machine (${docker.name || 'DOCKER_HOST'}), not this one.`,
    };
  const watches = readNumber(system, '/proc/sys/fs/inotify/max_user_watches');
  const instances = readNumber(system, '/proc/sys/fs/inotify/max_user_instances');
  if (watches === undefined || instances === undefined)
    return { ...base, status: 'warn', detail: 'Could not read /proc/sys/fs/inotify.', fix: INOTIFY_FIX };
  const low = [
    watches < MIN_INOTIFY_WATCHES ? `max_user_watches is ${watches} (want ≥ ${MIN_INOTIFY_WATCHES})` : '',
    instances < MIN_INOTIFY_INSTANCES ? `max_user_instances is ${instances} (want ≥ ${MIN_INOTIFY_INSTANCES})` : '',
  ].filter(Boolean);
  if (low.length === 0) return { ...base, status: 'ok', detail: `max_user_watches ${watches}, max_user_instances ${instances}` };
  return {
    ...base,
    status: 'warn',
    detail: `${low.join('; ')}: pods may fail with "too many open files", especially with several clusters.`,
    fix: INOTIFY_FIX,
  };
}

/** Loaded as a module (/proc/modules) or built in (/sys/module/<name>). */
function moduleLoaded(system: PreflightSystem, name: string, procModules: string | undefined): boolean {
  if (procModules && new RegExp(`^${name}\\s`, 'm').test(procModules)) return true;
  return system.exists(`/sys/module/${name}`);
}

/** Who runs a mode's dataplane on each node, as the findings name it ("kube-proxy logs …"). */
function program(record: ModeRecord<string>): string {
  const d = record.dataplane;
  switch (d.kind) {
    case 'kube-proxy':
      return 'kube-proxy';
    case 'agent':
      return d.agent.name;
    default:
      return unreachable(d);
  }
}

/**
 * The kernel modules a mode's dataplane loads (`host.kernelModules`: IPVS's for the IPVS mode), or
 * null when it loads none. kube-proxy loads the IPVS modules itself when it starts (since
 * Kubernetes 1.27), so modules that are not loaded yet are only a warning; a kernel that has none
 * to load is a failure.
 */
export function checkKernelModules(record: ModeRecord<string>, system: PreflightSystem, docker?: DockerInfo): Finding | null {
  const { who, kernelModules: mods } = record.host;
  if (!mods) return null;
  const base = { id: `${mods.what.toLowerCase()}-modules`, title: `${mods.what} kernel modules` };
  const runs = program(record);
  const core = mods.names[0];
  const fix = `sudo modprobe ${mods.names.join(' ')}`;
  if (system.platform !== 'linux' || docker?.desktop) {
    return {
      ...base,
      status: 'warn',
      detail: `Not checked: the kernel is the Docker VM's. Docker Desktop's kernel usually ships ${mods.what}; if ${runs} logs "${mods.missingLog}", the VM kernel lacks it.`,
      fix: `If the ${record.short} cluster's ${runs} fails, use another mode or a Docker VM whose kernel has ${core} (e.g. a Linux machine).`,
    };
  }
  if (docker?.remote) {
    return {
      ...base,
      status: 'warn',
      detail: `Not checked: the nodes share the kernel of the engine's machine (${docker.name || 'DOCKER_HOST'}, Linux ${docker.kernelVersion || '?'}), not this one's.`,
      fix: `On that machine: \`${fix}\`; if ${runs} logs "${mods.missingLog}", its kernel lacks ${core}.`,
    };
  }
  const procModules = system.readText('/proc/modules');
  const missing = mods.names.filter((m) => !moduleLoaded(system, m, procModules));
  if (missing.length === 0) return { ...base, status: 'ok', detail: `${mods.names.join(', ')} loaded` };
  const release = system.readText('/proc/sys/kernel/osrelease')?.trim();
  // No /proc/modules: a kernel built without module support loads nothing, so what is not built
  // in is not there (measured here: kube-proxy's IPVS mode crash-looped with "can't use the IPVS
  // proxier" while the doctor said only "not loaded yet"). The core has parameters, so a built-in
  // core shows in /sys/module; helpers without any may not, so only the core's absence is sure.
  if (procModules === undefined && missing.includes(core)) {
    return {
      ...base,
      status: 'fail',
      detail: `This kernel (${release ?? 'unknown release'}) loads no modules (it has no /proc/modules) and has no ${core} built in: ${who} cannot start on it.`,
      fix: `Use another mode, or a host kernel built with ${mods.what} (${mods.config}); most distribution kernels have it.`,
    };
  }
  const dep = release ? system.readText(`/lib/modules/${release}/modules.dep`) : undefined;
  const available = (m: string) => dep === undefined || new RegExp(`(^|/)${m}\\.ko(\\.[a-z]+)?:`, 'm').test(dep);
  const absent = missing.filter((m) => !available(m));
  if (absent.length) {
    return {
      ...base,
      status: 'fail',
      detail: `This kernel (${release}) has no ${absent.join(', ')} module to load (not in modules.dep): ${who} cannot start on it.`,
      fix: `Use another mode, or a host kernel built with ${mods.what} (${mods.config}); most distribution kernels have it.`,
    };
  }
  return {
    ...base,
    status: 'warn',
    detail: `Not loaded yet: ${missing.join(', ')}. ${runs} loads them when it starts (Kubernetes ≥ ${mods.selfLoadedSince}); loading them now rules out a failure later.`,
    fix,
  };
}

/** "6.8.0-45-generic" → "6.8.0"; null when no version is in it. */
function kernelRelease(text: string): string | null {
  return /^(\d+\.\d+(?:\.\d+)?)/.exec(text.trim())?.[1] ?? null;
}

/**
 * The Docker host's kernel is the nodes' kernel: each mode's `host.minKernel` (Cilium ≥ 5.10, the
 * nftables mode ≥ 5.13), in the modes' order, a need two modes share said once.
 */
export function checkKernelVersion(modes: readonly Mode[], docker?: DockerInfo): Finding | null {
  const said = new Map<string, { what: string; min: string }>();
  for (const { who, minKernel } of modes.map((m) => modeRecord(m).host))
    if (minKernel !== null) said.set(`${who} ${minKernel}`, { what: who, min: minKernel });
  const needs = [...said.values()];
  if (needs.length === 0) return null;
  const base = { id: 'kernel-version', title: 'Kernel version' };
  const release = docker ? kernelRelease(docker.kernelVersion) : null;
  if (!release)
    return {
      ...base,
      status: 'warn',
      detail: `Not checked: Docker did not report its kernel. ${needs.map((n) => `${n.what} needs Linux ≥ ${n.min}`).join('; ')}.`,
    };
  const low = needs.filter((n) => compareVersions(release, n.min) < 0);
  if (low.length === 0)
    return {
      ...base,
      status: 'ok',
      detail: `Linux ${docker?.kernelVersion} (${needs.map((n) => `${n.what} needs ≥ ${n.min}`).join(', ')})`,
    };
  return {
    ...base,
    status: 'fail',
    detail: `The Docker host runs Linux ${docker?.kernelVersion}; ${low.map((n) => `${n.what} needs ≥ ${n.min}`).join(' and ')}. kind nodes share this kernel.`,
    fix: 'Upgrade the host kernel (or the Docker VM), or use another mode.',
  };
}

/**
 * Cilium's socket load balancer attaches its programs at the cgroup v2 root; on kind each node
 * must sit in a private cgroup namespace, or the nodes' programs see each other's sockets.
 */
export function checkCgroups(modes: readonly Mode[], docker?: DockerInfo, system?: PreflightSystem): Finding | null {
  if (!modes.some((m) => modeRecord(m).host.cgroupV2)) return null;
  const base = { id: 'cgroups', title: 'cgroup v2 and cgroup namespaces' };
  if (!docker || docker.cgroupVersion === '')
    return {
      ...base,
      status: 'warn',
      detail: "Not checked: Docker did not report its cgroup version. Cilium's socket load balancer needs cgroup v2.",
    };
  if (docker.cgroupVersion !== '2') {
    // cgroup v1 controllers, and a kernel that also has cgroup v2: Cilium mounts cgroup2 for
    // itself (/run/cilium/cgroupv2) and attaches its socket programs there. Seen working on these
    // machines (kind v0.31.0, Docker 20.10 on a cgroup v1 hybrid host, Cilium 1.19.4:
    // KubeProxyReplacement True, pod-to-Service connections translated at connect()), also in a
    // workshop seat's Docker-in-Docker there. /proc/filesystems is the kernel's, so a seat's runner,
    // which shares the kernel but not the mounts of its Docker sidecar, reads the same answer.
    const v2InKernel =
      !docker.remote &&
      !docker.desktop &&
      system?.platform === 'linux' &&
      (system.readText('/proc/filesystems') ?? '').split('\n').some((line) => line.trim().split(/\s+/).at(-1) === 'cgroup2');
    if (v2InKernel)
      return {
        ...base,
        status: 'warn',
        detail:
          'Docker runs on cgroup v1; the kernel also has cgroup v2, which Cilium mounts for itself, and its socket load balancer works there, but kind and the kubelet deprecate cgroup v1 (Kubernetes 1.35 refuses it unless told to).',
        fix: 'Boot the host with the unified cgroup hierarchy (systemd.unified_cgroup_hierarchy=1 on the kernel command line) when you can.',
      };
    return {
      ...base,
      status: 'fail',
      detail: `Docker runs on cgroup v${docker.cgroupVersion}; Cilium's socket load balancer (kube-proxy replacement) needs cgroup v2.`,
      fix: 'Boot the host with the unified cgroup hierarchy (systemd.unified_cgroup_hierarchy=1 on the kernel command line); current distributions and Docker Desktop use cgroup v2 already.',
    };
  }
  if (!docker.cgroupns) {
    return {
      ...base,
      status: 'warn',
      detail:
        "Docker gives containers the host cgroup namespace by default: every kind node then shares one cgroup root, and Cilium's socket load balancer on one node acts for the others.",
      fix: 'Set "default-cgroupns-mode": "private" in /etc/docker/daemon.json and restart Docker (private is the default on cgroup v2 unless it was changed).',
    };
  }
  return { ...base, status: 'ok', detail: 'cgroup v2, private cgroup namespaces' };
}
