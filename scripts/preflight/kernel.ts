/**
 * Host kernel settings kind nodes depend on (they share the Docker host's kernel): inotify
 * limits for many kubelets, and the IPVS modules for the IPVS mode.
 */
import type { DockerInfo } from './docker.ts';
import type { Finding, PreflightSystem } from './types.ts';

/** kind's known-issues page: "Pod errors due to too many open files". */
export const MIN_INOTIFY_WATCHES = 524_288;
export const MIN_INOTIFY_INSTANCES = 512;
/** What kube-proxy's IPVS mode loads: the core, the schedulers the labs use, and conntrack. */
export const IPVS_MODULES = ['ip_vs', 'ip_vs_rr', 'ip_vs_wrr', 'ip_vs_sh', 'nf_conntrack'] as const;

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
  const watches = readNumber(system, '/proc/sys/fs/inotify/max_user_watches');
  const instances = readNumber(system, '/proc/sys/fs/inotify/max_user_instances');
  if (watches === undefined || instances === undefined) return { ...base, status: 'warn', detail: 'Could not read /proc/sys/fs/inotify.', fix: INOTIFY_FIX };
  const low = [
    watches < MIN_INOTIFY_WATCHES ? `max_user_watches is ${watches} (want ≥ ${MIN_INOTIFY_WATCHES})` : '',
    instances < MIN_INOTIFY_INSTANCES ? `max_user_instances is ${instances} (want ≥ ${MIN_INOTIFY_INSTANCES})` : '',
  ].filter(Boolean);
  if (low.length === 0) return { ...base, status: 'ok', detail: `max_user_watches ${watches}, max_user_instances ${instances}` };
  return { ...base, status: 'warn', detail: `${low.join('; ')}: pods may fail with "too many open files", especially with several clusters.`, fix: INOTIFY_FIX };
}

/** Loaded as a module (/proc/modules) or built in (/sys/module/<name>). */
function moduleLoaded(system: PreflightSystem, name: string, procModules: string | undefined): boolean {
  if (procModules && new RegExp(`^${name}\\s`, 'm').test(procModules)) return true;
  return system.exists(`/sys/module/${name}`);
}

export function checkIpvsModules(system: PreflightSystem, docker?: DockerInfo): Finding {
  const base = { id: 'ipvs-modules', title: 'IPVS kernel modules' };
  const fix = `sudo modprobe ${IPVS_MODULES.join(' ')}`;
  if (system.platform !== 'linux' || docker?.desktop) {
    return {
      ...base,
      status: 'warn',
      detail: 'Not checked: the kernel is the Docker VM\'s. Docker Desktop\'s kernel usually ships IPVS; if kube-proxy logs "can\'t use the IPVS proxier", the VM kernel lacks it.',
      fix: 'If the IPVS cluster\'s kube-proxy fails, use another mode or a Docker VM whose kernel has ip_vs (e.g. a Linux machine).',
    };
  }
  const procModules = system.readText('/proc/modules');
  const missing = IPVS_MODULES.filter((m) => !moduleLoaded(system, m, procModules));
  if (missing.length === 0) return { ...base, status: 'ok', detail: `${IPVS_MODULES.join(', ')} loaded` };
  return { ...base, status: 'fail', detail: `Not loaded: ${missing.join(', ')}. kind nodes share this kernel, so kube-proxy's IPVS mode cannot start without them.`, fix };
}
