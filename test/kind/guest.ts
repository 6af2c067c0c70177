/**
 * The IPVS guest: this host's kernel has no ip_vs and loads no modules, so the IPVS cluster runs
 * in a QEMU guest (software emulation: the host's KVM is PVM-only and hangs stock kernels)
 * booting Debian 12's own kernel, whose ip_vs modules kube-proxy loads. The guest runs
 * Debian's Docker; kind, the product and its checks stay on the host and reach it as a learner
 * reaches a remote engine: DOCKER_HOST=tcp://<guest>:2375, the API server published on the
 * guest's address, node IPs routed to the guest.
 *
 * Network (host-only, on a tap device): host 192.168.127.1, guest 192.168.127.2; the guest's
 * `kind` network is 172.28.0.0/16 (made before kind asks, so it cannot collide with the host
 * engine's 172.18.0.0/16) and routed via the guest; the host masquerades the guest's traffic out,
 * so nodes can `apt-get install ipvsadm` as the lab asks.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CommandError, run, type CommandResult, type RunOptions } from '../../scripts/base/exec.ts';
import { DplabError } from '../../scripts/base/errors.ts';
import { projectRoot } from '../../scripts/base/paths.ts';
import { simBinDir } from '../../scripts/sim/build.ts';
import { hashOf, isFresh, stamp, stampOf, cacheDir } from './layout.ts';
import { aptInstall } from './rootfs.ts';

export const GUEST = {
  tap: 'dplab-tap0',
  hostIp: '192.168.127.1',
  ip: '192.168.127.2',
  prefix: 24,
  subnet: '192.168.127.0/24',
  kindSubnet: '172.28.0.0/16',
  kindGateway: '172.28.0.1',
  dockerPort: 2375,
  memoryMiB: Number(process.env.DPLAB_GUEST_MEMORY_MIB ?? 8192),
  cpus: 2,
  diskGiB: 40,
} as const;

/**
 * How much longer than a learner's every dplab timeout and settle window is in the guest
 * (DPLAB_TIMEOUT_FACTOR): under software emulation kube-proxy took ~40 s from queueing a sync
 * to finishing it, and fork-heavy work runs ~20× slower than on this host.
 */
export const GUEST_TIMEOUT_FACTOR = 4;

const guestDir = () => join(cacheDir(), 'guest');
const diskPath = () => join(guestDir(), 'disk.img');
const pidPath = () => join(guestDir(), 'qemu.pid');
const consoleLog = () => join(guestDir(), 'console.log');
export const guestDockerHost = () => `tcp://${GUEST.ip}:${GUEST.dockerPort}`;
export const guestEngine = (): RunOptions => ({ env: { DOCKER_HOST: guestDockerHost() } });

/**
 * Folders of this machine the guest can mount over 9p (`mount -t 9p -o trans=virtio <tag> <at>`):
 * the project, the sim's Kubernetes binaries and this Node.js, at the same paths as here, so the
 * sim provider can run in the guest's kernel (test/kind/guest-sim.ts) and write its recordings
 * straight into the project.
 */
export const GUEST_SHARES = [
  { tag: 'dplab-project', path: () => projectRoot, readonly: false },
  { tag: 'dplab-simbin', path: () => simBinDir(), readonly: true },
  // Node.js alone, not its folder: that is /usr/bin where Node comes from Debian or NodeSource,
  // and this host's /usr/bin over the guest's hid the guest's own kmod (so no module autoloading).
  { tag: 'dplab-node', path: () => nodeShareDir(), readonly: true },
  // The sim's build step asks Go for its version before it trusts its cached binaries.
  { tag: 'dplab-go', path: () => goRoot(), readonly: true },
] as const;

const nodeShareDir = () => join(guestDir(), 'node-bin');

/** The folder shared as dplab-node: a hard link to this Node.js (a copy across file systems). */
function fillNodeShare(): void {
  const to = join(nodeShareDir(), 'node');
  rmSync(nodeShareDir(), { recursive: true, force: true });
  mkdirSync(nodeShareDir(), { recursive: true });
  try {
    linkSync(process.execPath, to);
  } catch {
    copyFileSync(process.execPath, to);
  }
}

/** This machine's GOROOT (`go env GOROOT`), or a folder that does not exist when Go is missing. */
export function goRoot(): string {
  const r = spawnSync('go', ['env', 'GOROOT'], { encoding: 'utf8', timeout: 30_000 });
  return r.status === 0 && r.stdout.trim() ? r.stdout.trim() : '/nonexistent/go';
}

/** The kernel modules kube-proxy's IPVS mode and kind's nodes use, loaded at boot. */
const BOOT_MODULES = ['ip_vs', 'ip_vs_rr', 'ip_vs_wrr', 'ip_vs_sh', 'ip_vs_lc', 'nf_conntrack', 'br_netfilter', 'overlay', 'xt_conntrack'];

function hostResolver(): string {
  const line = readFileSync('/etc/resolv.conf', 'utf8')
    .split('\n')
    .find((l) => /^nameserver\s+\d/.test(l));
  return line?.split(/\s+/)[1] ?? '1.1.1.1';
}

/** Files written over the debootstrap'd system: network, Docker on TCP, modules, fstab, sysctls. */
function guestFiles(): Record<string, string> {
  return {
    'etc/hostname': 'dplab-ipvs-guest\n',
    'etc/fstab': '/dev/vda / ext4 defaults,noatime 0 1\n',
    'etc/resolv.conf': `nameserver ${hostResolver()}\n`,
    'etc/systemd/network/10-eth0.network': `[Match]\nName=eth0\n\n[Network]\nAddress=${GUEST.ip}/${GUEST.prefix}\nGateway=${GUEST.hostIp}\n`,
    'etc/modules-load.d/dplab-ipvs.conf': `${BOOT_MODULES.join('\n')}\n`,
    'etc/sysctl.d/90-dplab.conf': 'fs.inotify.max_user_watches=524288\nfs.inotify.max_user_instances=512\nnet.ipv4.ip_forward=1\n',
    // Docker on the guest's own address too (a host-only network), and traffic from the host
    // forwarded to containers (Docker's FORWARD policy drops what it did not publish).
    'etc/systemd/system/docker.service.d/10-dplab.conf': [
      '[Service]',
      'ExecStart=',
      `ExecStart=/usr/sbin/dockerd -H unix:///var/run/docker.sock -H tcp://${GUEST.ip}:${GUEST.dockerPort} --containerd=/run/containerd/containerd.sock`,
      `ExecStartPost=/bin/sh -c 'for i in $(seq 60); do iptables -L DOCKER-USER >/dev/null 2>&1 && break; sleep 1; done; iptables -C DOCKER-USER -s ${GUEST.subnet} -j ACCEPT 2>/dev/null || iptables -I DOCKER-USER -s ${GUEST.subnet} -j ACCEPT'`,
      '',
    ].join('\n'),
    'etc/systemd/system/multi-user.target.wants/systemd-networkd.service': '@link:/lib/systemd/system/systemd-networkd.service',
  };
}

/** Make (or reuse) the guest's disk from the guest root filesystem; its Docker data lives on it. */
export async function ensureGuestDisk(
  rootfs: string,
  say: (l: string) => void,
  signal?: AbortSignal,
): Promise<{ kernel: string; initrd: string }> {
  const files = guestFiles();
  const hash = hashOf(stampOf(rootfs), files, GUEST.diskGiB);
  const boot = join(guestDir(), 'boot');
  const pick = (prefix: string) => {
    const f = readdirSync(join(rootfs, 'boot')).find((n) => n.startsWith(prefix));
    if (!f) throw new DplabError(`The guest root filesystem has no /boot/${prefix}*: linux-image-amd64 did not install.`);
    return f;
  };
  const kernel = join(boot, 'vmlinuz');
  const initrd = join(boot, 'initrd.img');
  if (isFresh(diskPath(), hash) && existsSync(kernel) && existsSync(initrd)) return { kernel, initrd };
  if (guestRunning())
    throw new DplabError('The IPVS guest runs from an older disk.', { fix: 'Stop it first: `npm run testenv -- down --guest`.' });
  say('guest: making its disk (ext4 from the guest root filesystem)…');
  mkdirSync(boot, { recursive: true });
  const stage = join(guestDir(), 'stage');
  rmSync(stage, { recursive: true, force: true });
  await run('cp', ['-a', rootfs, stage], { timeoutMs: 10 * 60_000, signal });
  for (const [rel, content] of Object.entries(files)) {
    const to = join(stage, rel);
    mkdirSync(join(to, '..'), { recursive: true });
    rmSync(to, { force: true });
    if (content.startsWith('@link:')) await run('ln', ['-s', content.slice('@link:'.length), to], { timeoutMs: 10_000 });
    else writeFileSync(to, content);
  }
  await run('cp', [join(rootfs, 'boot', pick('vmlinuz-')), kernel], { timeoutMs: 60_000 });
  await run('cp', [join(rootfs, 'boot', pick('initrd.img-')), initrd], { timeoutMs: 60_000 });
  rmSync(diskPath(), { force: true });
  await run('mkfs.ext4', ['-q', '-F', '-L', 'dplab-guest', '-d', stage, diskPath(), `${GUEST.diskGiB}G`], {
    timeoutMs: 20 * 60_000,
    signal,
  });
  rmSync(stage, { recursive: true, force: true });
  stamp(diskPath(), hash);
  return { kernel, initrd };
}

function guestPid(): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(pidPath(), 'utf8'), 10);
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

const guestRunning = () => guestPid() !== undefined;

async function sh(file: string, args: string[]): Promise<void> {
  await run(file, args, { timeoutMs: 30_000 });
}

/** The host side: the tap device, forwarding to and from it, a masquerade out, the route to the guest's kind network. */
async function hostNetwork(): Promise<void> {
  const exists = await run('ip', ['link', 'show', GUEST.tap], { timeoutMs: 10_000 }).then(
    () => true,
    () => false,
  );
  if (!exists) await sh('ip', ['tuntap', 'add', 'dev', GUEST.tap, 'mode', 'tap']);
  await sh('ip', ['addr', 'replace', `${GUEST.hostIp}/${GUEST.prefix}`, 'dev', GUEST.tap]);
  await sh('ip', ['link', 'set', GUEST.tap, 'up']);
  writeFileSync('/proc/sys/net/ipv4/ip_forward', '1');
  const ensure = async (table: string, chain: string, rule: string[]) => {
    try {
      await run('iptables', ['-t', table, '-C', chain, ...rule], { timeoutMs: 10_000 });
    } catch {
      await sh('iptables', ['-t', table, '-I', chain, ...rule]);
    }
  };
  await ensure('filter', 'FORWARD', ['-i', GUEST.tap, '-j', 'ACCEPT']);
  await ensure('filter', 'FORWARD', ['-o', GUEST.tap, '-j', 'ACCEPT']);
  await ensure('nat', 'POSTROUTING', ['-s', GUEST.subnet, '!', '-o', GUEST.tap, '-j', 'MASQUERADE']);
  await sh('ip', ['route', 'replace', GUEST.kindSubnet, 'via', GUEST.ip, 'dev', GUEST.tap]);
}

async function dockerAnswers(): Promise<boolean> {
  try {
    await run('docker', ['version', '--format', '{{.Server.Version}}'], { ...guestEngine(), timeoutMs: 10_000 });
    return true;
  } catch (err) {
    if (err instanceof CommandError && err.kind === 'tool-missing') throw err;
    return false;
  }
}

/** Boot the guest (or find it running) and wait for its Docker; resolves with the boot time. */
export async function startGuest(boot: { kernel: string; initrd: string }, say: (l: string) => void): Promise<number> {
  await hostNetwork();
  if (guestRunning() && (await dockerAnswers())) {
    say(`guest: running (${guestDockerHost()})`);
    return 0;
  }
  if (!existsSync('/usr/bin/qemu-system-x86_64')) await aptInstall(['qemu-system-x86']);
  const started = Date.now();
  fillNodeShare();
  const log = openSync(join(guestDir(), 'qemu.log'), 'w');
  const args = [
    '-name',
    'dplab-ipvs-guest',
    '-machine',
    'q35',
    '-accel',
    'tcg,thread=multi',
    '-cpu',
    'max',
    '-smp',
    String(GUEST.cpus),
    '-m',
    String(GUEST.memoryMiB),
    '-kernel',
    boot.kernel,
    '-initrd',
    boot.initrd,
    '-append',
    'root=/dev/vda rw console=ttyS0 net.ifnames=0 systemd.unified_cgroup_hierarchy=1 quiet',
    '-drive',
    `file=${diskPath()},if=virtio,format=raw,cache=unsafe`,
    ...GUEST_SHARES.flatMap((share) => [
      '-virtfs',
      `local,path=${share.path()},mount_tag=${share.tag},security_model=passthrough${share.readonly ? ',readonly=on' : ''}`,
    ]),
    '-netdev',
    `tap,id=n0,ifname=${GUEST.tap},script=no,downscript=no`,
    '-device',
    'virtio-net-pci,netdev=n0',
    '-display',
    'none',
    '-serial',
    `file:${consoleLog()}`,
    '-monitor',
    'none',
    '-pidfile',
    pidPath(),
  ];
  const child = spawn('qemu-system-x86_64', args, { detached: true, stdio: ['ignore', log, log] });
  child.unref();
  closeSync(log);
  say(`guest: booting Debian's kernel under QEMU (software emulation, ${GUEST.cpus} CPUs, ${GUEST.memoryMiB} MiB)…`);
  const end = Date.now() + 10 * 60_000;
  while (Date.now() < end) {
    if (child.exitCode !== null) break;
    if (await dockerAnswers()) {
      const seconds = Math.round((Date.now() - started) / 1000);
      say(`guest: Docker answers after ${seconds} s (${guestDockerHost()})`);
      return seconds;
    }
    await sleep(2000);
  }
  throw new DplabError('The IPVS guest did not bring up Docker.', {
    fix: `Read ${consoleLog()} and ${join(guestDir(), 'qemu.log')}; \`npm run testenv -- down --guest\` stops a half-booted guest.`,
    details: existsSync(consoleLog()) ? readFileSync(consoleLog(), 'utf8').split('\n').slice(-20).join('\n') : undefined,
  });
}

/** The guest's `kind` network on its own subnet; kind reuses a network of that name. */
export async function ensureGuestKindNetwork(): Promise<void> {
  try {
    await run('docker', ['network', 'inspect', 'kind'], { ...guestEngine(), timeoutMs: 30_000 });
  } catch {
    await run(
      'docker',
      [
        'network',
        'create',
        '-d',
        'bridge',
        '-o',
        'com.docker.network.bridge.enable_ip_masquerade=true',
        '-o',
        'com.docker.network.driver.mtu=1500',
        '--subnet',
        GUEST.kindSubnet,
        '--gateway',
        GUEST.kindGateway,
        'kind',
      ],
      { ...guestEngine(), timeoutMs: 60_000 },
    );
  }
}

/** Copy an image from the host engine into the guest's, unless the guest has that very image. */
export async function copyImage(ref: string, host: RunOptions, say: (l: string) => void): Promise<void> {
  const id = (opts: RunOptions) =>
    run('docker', ['image', 'inspect', '--format', '{{.Id}}', ref], { ...opts, timeoutMs: 30_000 }).then(
      (r) => r.stdout.trim(),
      () => '',
    );
  const want = await id(host);
  if (want && (await id(guestEngine())) === want) return;
  const started = Date.now();
  const tar = join(guestDir(), 'image.tar');
  await run('docker', ['save', '-o', tar, ref], { ...host, timeoutMs: 20 * 60_000 });
  await run('docker', ['load', '-i', tar], { ...guestEngine(), timeoutMs: 30 * 60_000 });
  rmSync(tar, { force: true });
  say(`guest: loaded ${ref} in ${Math.round((Date.now() - started) / 1000)} s`);
}

const SHELL = 'dplab-guest-shell';

/**
 * The guest's shell: a privileged container of `image` in the guest's PID and network
 * namespaces, left running, through which `inGuest` enters PID 1's namespaces. Idempotent.
 */
export async function ensureGuestShell(image: string): Promise<void> {
  const inspect = await run('docker', ['inspect', '--format', '{{.State.Running}}', SHELL], { ...guestEngine(), timeoutMs: 30_000 }).catch(
    () => undefined,
  );
  if (inspect?.stdout.trim() === 'true') return;
  await run('docker', ['rm', '-f', SHELL], { ...guestEngine(), timeoutMs: 60_000 }).catch(() => undefined);
  await run(
    'docker',
    ['run', '-d', '--name', SHELL, '--privileged', '--pid=host', '--net=host', '--entrypoint', 'sleep', image, 'infinity'],
    {
      ...guestEngine(),
      timeoutMs: 120_000,
    },
  );
}

/** Run a command in the guest's own namespaces, as root on the guest (after `ensureGuestShell`). */
export function inGuest(args: readonly string[], opts: RunOptions = {}): Promise<CommandResult> {
  return run('docker', ['exec', SHELL, 'nsenter', '-t', '1', '-m', '-u', '-n', '-i', '-p', '--', ...args], {
    ...opts,
    env: { ...guestEngine().env, ...opts.env },
  });
}

/** Power the guest off from inside (Docker's data stays consistent), then make sure QEMU has ended. */
export async function stopGuest(image: string | undefined, say: (l: string) => void): Promise<void> {
  const pid = guestPid();
  if (!pid) {
    say('guest: not running');
    return;
  }
  if (image && (await dockerAnswers())) {
    // The guest's shell asks its systemd to power off.
    await ensureGuestShell(image)
      .then(() => inGuest(['systemctl', 'poweroff'], { timeoutMs: 60_000 }))
      .catch(() => undefined);
  }
  const end = Date.now() + 120_000;
  while (Date.now() < end && guestRunning()) await sleep(500);
  if (guestRunning()) process.kill(pid, 'SIGTERM');
  await sleep(1000);
  if (guestRunning()) process.kill(pid, 'SIGKILL');
  say('guest: stopped');
}
