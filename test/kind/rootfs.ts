/**
 * Root filesystems from Debian's packages, made with debootstrap (no image is pulled): the kind
 * node's base, the tools layer the kube-proxy, kindnetd and agnhost images share, Cilium's
 * runtime, and the IPVS guest's system. Each is a folder under the cache with a stamp of its
 * suite, mirror and package list; a changed list makes it again.
 */
import { existsSync, rmSync } from 'node:fs';
import { CommandError, run } from '../../scripts/base/exec.ts';
import { DplabError } from '../../scripts/base/errors.ts';
import { hashOf, isFresh, paths, stamp } from './layout.ts';

const DEBIAN_SUITE = 'bookworm';
const DEBIAN_MIRROR = process.env.DPLAB_TESTENV_MIRROR ?? 'http://deb.debian.org/debian';

export interface RootfsSpec {
  name: string;
  /** Packages beyond debootstrap's minbase (their Depends come along, not their Recommends). */
  packages: readonly string[];
  /** Files and folders removed afterwards (documentation, apt lists). */
  prune?: readonly string[];
}

const PRUNE = ['usr/share/doc', 'usr/share/man', 'usr/share/info', 'usr/share/locale', 'var/lib/apt/lists', 'var/cache/apt/archives'];

export const ROOTFS = {
  /** kind v0.31.0's images/base/Dockerfile: its `clean-install` list, on the same Debian suite. */
  kindBase: {
    name: 'kind-base',
    packages: [
      'systemd',
      'conntrack',
      'iptables',
      'nftables',
      'iproute2',
      'ethtool',
      'util-linux',
      'mount',
      'kmod',
      'libseccomp2',
      'pigz',
      'fuse-overlayfs',
      'nfs-common',
      'open-iscsi',
      'bash',
      'ca-certificates',
      'curl',
      'jq',
      'procps',
    ],
  },
  /**
   * One layer for every image that needs a userland: what kube-proxy's image carries (iptables,
   * nft, ipset, conntrack), what agnhost's Alpine image adds (curl, dig/nslookup, netcat,
   * iproute2, iperf, bash), and what kindnetd calls (iptables, ip).
   */
  tools: {
    name: 'tools',
    packages: [
      'iptables',
      'nftables',
      'ipset',
      'conntrack',
      'iproute2',
      'kmod',
      'curl',
      'bind9-dnsutils',
      'netcat-openbsd',
      'iperf',
      'procps',
      'ca-certificates',
      'bash',
    ],
  },
  /** Cilium's runtime image (images/runtime: iproute2, iptables, ipset, kmod, …) with Debian's LLVM 19.1.7, the version Cilium 1.19 ships, and bpftool. */
  cilium: {
    name: 'cilium-runtime',
    packages: [
      'iproute2',
      'iptables',
      'ipset',
      'kmod',
      'ca-certificates',
      'libatomic1',
      'clang-19',
      'llvm-19',
      'bpftool',
      'bash-completion',
      'procps',
    ],
  },
  /**
   * A workshop seat's Docker-in-Docker sidecar (seat-images.ts): Debian's Docker engine, with
   * what dockerd runs (containerd, runc, iptables) and what kind's nodes need of it.
   */
  dind: {
    name: 'dind',
    packages: ['docker.io', 'iptables', 'iproute2', 'kmod', 'ca-certificates', 'procps'],
  },
  /**
   * The IPVS guest (guest.ts): a Debian 12 system whose kernel (Debian's 6.1) has the ip_vs
   * modules this host's kernel lacks, with Docker for kind's nodes and ipvsadm.
   */
  guest: {
    name: 'ipvs-guest',
    packages: [
      'systemd',
      'systemd-sysv',
      'linux-image-amd64',
      'docker.io',
      'ipvsadm',
      'iproute2',
      'kmod',
      'iptables',
      'ca-certificates',
      'procps',
      'udev',
    ],
  },
} as const satisfies Record<string, RootfsSpec>;

async function haveDebootstrap(signal?: AbortSignal): Promise<void> {
  try {
    await run('debootstrap', ['--version'], { timeoutMs: 10_000, signal });
  } catch (err) {
    if (!(err instanceof CommandError) || err.kind !== 'tool-missing') throw err;
    await aptInstall(['debootstrap'], signal);
  }
}

/** Debian packages the environment itself needs on the host (debootstrap, docker.io, qemu, …). */
export async function aptInstall(packages: readonly string[], signal?: AbortSignal): Promise<void> {
  if (process.getuid?.() !== 0)
    throw new DplabError(`The test environment needs ${packages.join(', ')} and installs them with apt-get, which needs root.`, {
      fix: `Run it as root, or install them first: sudo apt-get install ${packages.join(' ')}`,
    });
  try {
    await run('apt-get', ['update', '-qq'], { timeoutMs: 10 * 60_000, signal });
    await run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], {
      timeoutMs: 20 * 60_000,
      signal,
      env: { DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (err) {
    throw new DplabError(
      `Installing ${packages.join(', ')} with apt-get failed: the package source is not reachable, or a package is not in it.`,
      {
        fix: 'Check `apt-get update` and the sources in /etc/apt/sources.list.d/; the environment needs Debian 12 (bookworm) packages.',
        details: err instanceof CommandError ? err.details : String(err),
      },
    );
  }
}

/**
 * Host packages the Go builds link against: runc's seccomp support is cgo against libseccomp
 * (found with pkg-config), and the pause program is a static C binary.
 */
export async function ensureBuildPackages(say: (l: string) => void, signal?: AbortSignal): Promise<void> {
  const missing: string[] = [];
  const has = async (cmd: string, args: string[]) =>
    run(cmd, args, { timeoutMs: 10_000, signal }).then(
      () => true,
      () => false,
    );
  if (!(await has('pkg-config', ['--exists', 'libseccomp']))) missing.push('pkg-config', 'libseccomp-dev');
  if (!existsSync('/usr/lib/x86_64-linux-gnu/libc.a') && !existsSync('/usr/lib/aarch64-linux-gnu/libc.a')) missing.push('libc6-dev');
  if (!(await has('gcc', ['--version']))) missing.push('gcc');
  if (missing.length === 0) return;
  say(`host: installing ${missing.join(', ')}`);
  await aptInstall(missing, signal);
}

/** Make (or reuse) a root filesystem folder; resolves with its path. */
export async function ensureRootfs(spec: RootfsSpec, say: (l: string) => void, signal?: AbortSignal): Promise<string> {
  const dir = paths.rootfs(spec.name);
  const hash = hashOf(DEBIAN_SUITE, DEBIAN_MIRROR, spec.packages, spec.prune ?? PRUNE);
  if (isFresh(dir, hash)) {
    say(`rootfs ${spec.name}: already made`);
    return dir;
  }
  await haveDebootstrap(signal);
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  const started = Date.now();
  say(`rootfs ${spec.name}: debootstrap ${DEBIAN_SUITE} with ${spec.packages.length} packages…`);
  try {
    await run('debootstrap', ['--variant=minbase', `--include=${spec.packages.join(',')}`, DEBIAN_SUITE, dir, DEBIAN_MIRROR], {
      timeoutMs: 30 * 60_000,
      signal,
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new DplabError(`debootstrap of the ${spec.name} root filesystem failed.`, {
      fix: `Check that ${DEBIAN_MIRROR} answers (or set DPLAB_TESTENV_MIRROR to a Debian mirror) and that every package exists in ${DEBIAN_SUITE}.`,
      details: err instanceof CommandError ? err.details : String(err),
    });
  }
  for (const p of spec.prune ?? PRUNE) rmSync(`${dir}/${p}`, { recursive: true, force: true });
  stamp(dir, hash);
  say(`rootfs ${spec.name}: made in ${Math.round((Date.now() - started) / 1000)} s`);
  return dir;
}
