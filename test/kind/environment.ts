/**
 * `ensureTestEnv()`: everything a real kind cluster needs on these machines, built or reused in
 * order, with a progress line per component: the Go programs, the engine, the root filesystems,
 * the layers and images, the kind base and node images, then the overlay (DPLAB_KIND_OVERLAY)
 * and a shell environment file. What it returns is the environment the product then runs in,
 * unchanged: DOCKER_HOST at this engine, this kind/helm/kubectl first on PATH, the overlay.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { KIND_OVERLAY_ENV, type KindOverlay } from '../../scripts/clusters/kind-overlay.ts';
import { CILIUM_VERSION } from '../../scripts/base/versions.ts';
import { DplabError } from '../../scripts/base/errors.ts';
import { projectRoot } from '../../scripts/base/paths.ts';
import { ensureGoBinaries, ensureSimBinaries, simBinDir } from '../../scripts/sim/build.ts';
import { TESTENV_COMPONENTS, SIM_REUSED } from './components.ts';
import { writeDockerArchive, type ImageSpec } from './docker-archive.ts';
import { engineEnv, engineInfo, startEngine } from './engine.ts';
import { AGNHOST_IMAGE, catalogue, ENGINE_IMAGES, NODE_IMAGE_ARCHIVES } from './images.ts';
import { ensureLayer } from './layers.ts';
import { engineHost, hashOf, isFresh, paths, stamp, stampOf } from './layout.ts';
import { dockerLoad, ensureBaseImage, ensureNodeImage, ensurePause, goModuleDir, imagePresent } from './node-image.ts';
import { ensureBuildPackages, ensureRootfs, ROOTFS } from './rootfs.ts';
import {
  copyImage,
  ensureGuestDisk,
  ensureGuestKindNetwork,
  GUEST,
  GUEST_TIMEOUT_FACTOR,
  guestDockerHost,
  guestEngine,
  startGuest,
} from './guest.ts';
import { run } from '../../scripts/base/exec.ts';

export interface TestEnv {
  /** Environment variables the product runs with (DOCKER_HOST, PATH, DPLAB_KIND_OVERLAY). */
  env: Record<string, string>;
  nodeImage: string;
  overlay: KindOverlay;
  /** Every component and its version, for recordings. */
  components: Record<string, string>;
}

export interface EnsureOptions {
  say?: (line: string) => void;
  signal?: AbortSignal;
}

/** kind's known-issues page: many kubelets need more inotify instances than the default 128. */
const INOTIFY = { 'fs.inotify.max_user_watches': 524288, 'fs.inotify.max_user_instances': 512 };

function raiseInotify(say: (l: string) => void): void {
  for (const [key, want] of Object.entries(INOTIFY)) {
    const file = `/proc/sys/${key.replaceAll('.', '/')}`;
    const now = Number.parseInt(readFileSync(file, 'utf8'), 10);
    if (now < want) {
      writeFileSync(file, String(want));
      say(`host: ${key} ${now} → ${want}`);
    }
  }
}

/** Capabilities named in an OCI spec or a chart that root here may not hold. */
export function boundingSetLacksSysResource(): boolean {
  const line = readFileSync('/proc/self/status', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('CapBnd:'));
  return !!line && (BigInt(`0x${line.split(/\s+/)[1]}`) & (1n << 24n)) === 0n;
}

/** Cilium's chart lists these for its agent and clean-up containers; SYS_RESOURCE is dropped where the host lacks it. */
const CILIUM_AGENT_CAPS = [
  'CHOWN',
  'KILL',
  'NET_ADMIN',
  'NET_RAW',
  'IPC_LOCK',
  'SYS_MODULE',
  'SYS_ADMIN',
  'SYS_RESOURCE',
  'DAC_OVERRIDE',
  'FOWNER',
  'SETGID',
  'SETUID',
  'SYSLOG',
];
const CILIUM_CLEAN_CAPS = ['NET_ADMIN', 'SYS_MODULE', 'SYS_ADMIN', 'SYS_RESOURCE'];

function overlayFor(nodeImage: string, ciliumChart: string, host: { cgroupV1: boolean; lacksSysResource: boolean }): KindOverlay {
  const drop = (caps: string[]) => (host.lacksSysResource ? caps.filter((c) => c !== 'SYS_RESOURCE') : caps);
  const why = [host.cgroupV1 ? 'cgroup v1 host' : '', host.lacksSysResource ? 'no CAP_SYS_RESOURCE' : ''].filter(Boolean).join(', ');
  return {
    name: `dplab test environment (test/kind/: local images${why ? `, ${why}` : ''})`,
    nodeImage,
    kubeadmConfigPatches: host.cgroupV1 ? ['kind: KubeletConfiguration\nfailCgroupV1: false\n'] : [],
    containerdConfigPatches: host.lacksSysResource ? ['[plugins."io.containerd.grpc.v1.cri"]\n  restrict_oom_score_adj = true\n'] : [],
    cilium: {
      chart: ciliumChart,
      values: [
        'image.useDigest=false',
        'operator.image.useDigest=false',
        'hubble.relay.image.useDigest=false',
        'envoy.enabled=false',
        'l7Proxy=false',
        ...(host.lacksSysResource
          ? [
              `securityContext.capabilities.ciliumAgent={${drop(CILIUM_AGENT_CAPS).join(',')}}`,
              `securityContext.capabilities.cleanCiliumState={${drop(CILIUM_CLEAN_CAPS).join(',')}}`,
            ]
          : []),
      ],
    },
  };
}

function componentVersionsOf(): Record<string, string> {
  return Object.fromEntries(
    TESTENV_COMPONENTS.filter((c) => !c.name.startsWith('cilium-') || c.name === 'cilium-agent').map((c) => [c.name, c.version]),
  );
}

export async function ensureTestEnv(opts: EnsureOptions = {}): Promise<TestEnv> {
  const say = opts.say ?? (() => undefined);
  const signal = opts.signal;
  if (process.platform !== 'linux' || process.getuid?.() !== 0)
    throw new DplabError('The kind test environment runs its own Docker engine and debootstrap: it needs Linux and root.', {
      fix: 'Run it as root on Linux (these machines), or use your own Docker with `npm run test:live`.',
    });
  const bin = paths.bin();
  process.env.PATH = `${bin}:${simBinDir()}:${process.env.PATH ?? ''}`;

  await ensureBuildPackages(say, signal);
  await ensureSimBinaries({ only: SIM_REUSED, onProgress: say, signal });
  await ensureGoBinaries(TESTENV_COMPONENTS, bin, {
    onProgress: say,
    signal,
    purpose: 'The kind test environment builds its programs from Go modules',
  });
  const binOf = (name: string) => (SIM_REUSED.includes(name) ? join(simBinDir(), name) : join(bin, name));

  await startEngine(join(bin, 'dplab-runc'), say, signal);
  const engine = { ...engineEnv(), signal };
  const info = await engineInfo(signal);
  raiseInotify(say);

  const [kindBase, tools, ciliumRoot] = [
    await ensureRootfs(ROOTFS.kindBase, say, signal),
    await ensureRootfs(ROOTFS.tools, say, signal),
    await ensureRootfs(ROOTFS.cilium, say, signal),
  ];
  const kindModule = await goModuleDir('test/kind/go/kind', 'sigs.k8s.io/kind', signal);
  const ciliumModule = await goModuleDir('test/kind/go/cilium', 'github.com/cilium/cilium', signal);
  const k8sModule = await goModuleDir('scripts/sim/go', 'k8s.io/kubernetes', signal);
  const pause = await ensurePause(k8sModule, say, signal);

  const cat = catalogue({
    bin: binOf,
    pause,
    iptablesWrapper: join(projectRoot, 'test/kind/images/iptables-wrapper'),
    toolsRootfs: tools,
    ciliumRootfs: ciliumRoot,
    ciliumModule,
  });
  const layerFiles: Record<string, string> = {};
  for (const [key, spec] of Object.entries(cat.layers)) layerFiles[key] = await ensureLayer(spec, say, signal);
  const image = (key: string): ImageSpec => {
    const i = cat.images[key];
    return { tags: i.tags, layers: i.layers.map((l) => layerFiles[l]), config: i.config };
  };
  const imagesHash = hashOf(...Object.values(layerFiles).map(stampOf), cat.images);

  const baseImage = await ensureBaseImage({ rootfs: kindBase, kindModule, bin: binOf }, engine, say, signal);
  const archives = Object.fromEntries(Object.entries(NODE_IMAGE_ARCHIVES).map(([name, keys]) => [name, keys.map(image)]));
  const nodeImage = await ensureNodeImage({ baseImage, bin: binOf, archives, imagesHash }, engine, say, signal);

  // The images the product loads into the nodes itself (`kind load docker-image`), in the engine.
  const loaded = paths.archive('engine-images');
  const loadedHash = hashOf(imagesHash, ENGINE_IMAGES);
  const present = await Promise.all(ENGINE_IMAGES.flatMap((k) => cat.images[k].tags).map((t) => imagePresent(t, engine)));
  if (!isFresh(loaded, loadedHash) || present.includes(false)) {
    await writeDockerArchive(ENGINE_IMAGES.map(image), loaded, signal);
    await dockerLoad(loaded, engine);
    stamp(loaded, loadedHash);
    say(`engine: loaded ${ENGINE_IMAGES.map((k) => cat.images[k].tags.join(', ')).join('; ')}`);
  }

  const overlay = overlayFor(nodeImage, join(ciliumModule, 'install/kubernetes/cilium'), {
    cgroupV1: info.cgroupVersion === '1',
    lacksSysResource: boundingSetLacksSysResource(),
  });
  mkdirSync(dirname(paths.overlay()), { recursive: true });
  writeFileSync(paths.overlay(), `${JSON.stringify(overlay, null, 2)}\n`);
  const env = { DOCKER_HOST: engineHost(), PATH: process.env.PATH ?? '', [KIND_OVERLAY_ENV]: paths.overlay() };
  writeFileSync(
    paths.envFile(),
    [
      '# The kind test environment (npm run testenv -- up): source this file to run dplab against it.',
      `export DOCKER_HOST='${engineHost()}'`,
      `export ${KIND_OVERLAY_ENV}='${paths.overlay()}'`,
      `export PATH="${bin}:${simBinDir()}:$PATH"`,
      '',
    ].join('\n'),
  );
  say(`ready: node image ${nodeImage}, Cilium ${CILIUM_VERSION} chart ${overlay.cilium?.chart}`);
  return {
    env,
    nodeImage,
    overlay,
    components: { ...componentVersionsOf(), docker: info.serverVersion, kernel: info.kernelVersion, cgroup: `v${info.cgroupVersion}` },
  };
}

/** The IPVS guest's files: its own overlay and shell environment, beside the host engine's. */
export const guestPaths = {
  overlay: () => join(dirname(paths.overlay()), 'guest-overlay.json'),
  envFile: () => join(dirname(paths.envFile()), 'guest-env.sh'),
};

/**
 * The IPVS guest on top of the host environment: its disk, its boot, its `kind` network, the node
 * image and agnhost copied into its engine, and an overlay that publishes the API server on the
 * guest's address. Nothing about cgroup v1 or capabilities: the guest is its own kernel, on
 * cgroup v2, with a root that holds every capability.
 */
export async function ensureGuestEnv(host: TestEnv, opts: EnsureOptions = {}): Promise<TestEnv & { bootSeconds: number }> {
  const say = opts.say ?? (() => undefined);
  const rootfs = await ensureRootfs(ROOTFS.guest, say, opts.signal);
  const boot = await ensureGuestDisk(rootfs, say, opts.signal);
  const bootSeconds = await startGuest(boot, say);
  await ensureGuestKindNetwork();
  for (const ref of [host.nodeImage, AGNHOST_IMAGE]) await copyImage(ref, engineEnv(), say);
  const base = overlayFor(host.nodeImage, host.overlay.cilium?.chart ?? '', { cgroupV1: false, lacksSysResource: false });
  const overlay: KindOverlay = {
    ...base,
    name: 'dplab test environment (test/kind/: local images, Docker in a QEMU guest with ip_vs)',
    apiServerAddress: GUEST.ip,
    // kind would pick a free port by listening on GUEST.ip, which is not this machine's address.
    apiServerPortBase: 16443,
    // Software emulation runs everything several times slower than a laptop: dplab gets four
    // times a learner's timeouts (DPLAB_TIMEOUT_FACTOR in the env file below), and kubeadm more
    // than its 4 and 5 minutes to see the control plane healthy and (on the workers) the signed
    // cluster-info, which the controller manager's bootstrap signer writes late here.
    kubeadmConfigPatches: [
      ...base.kubeadmConfigPatches,
      'kind: ClusterConfiguration\napiServer:\n  timeoutForControlPlane: 20m0s\n',
      // One control plane, so no leader to elect: under emulation a lease renewal past its
      // 10 s deadline made the controller manager and scheduler exit and start over, and the
      // workers' joins waited on the bootstrap signer of a controller manager that kept restarting.
      'kind: ClusterConfiguration\ncontrollerManager:\n  extraArgs:\n    leader-elect: "false"\nscheduler:\n  extraArgs:\n    leader-elect: "false"\n',
      'kind: JoinConfiguration\ndiscovery:\n  timeout: 20m0s\n',
    ],
  };
  writeFileSync(guestPaths.overlay(), `${JSON.stringify(overlay, null, 2)}\n`);
  const kernel = (await run('docker', ['info', '--format', '{{.KernelVersion}}'], { ...guestEngine(), timeoutMs: 30_000 })).stdout.trim();
  const env = {
    DOCKER_HOST: guestDockerHost(),
    PATH: host.env.PATH,
    [KIND_OVERLAY_ENV]: guestPaths.overlay(),
    // Node IPs are routed to the guest, so probes go straight from this machine, as on a native engine.
    DPLAB_PROBE_FROM: 'host',
    DPLAB_TIMEOUT_FACTOR: String(GUEST_TIMEOUT_FACTOR),
  };
  writeFileSync(
    guestPaths.envFile(),
    [
      "# The kind test environment's IPVS guest (npm run testenv -- up --guest): source this file to run dplab against it.",
      `export DOCKER_HOST='${env.DOCKER_HOST}'`,
      `export ${KIND_OVERLAY_ENV}='${env[KIND_OVERLAY_ENV]}'`,
      "export DPLAB_PROBE_FROM='host'",
      `export DPLAB_TIMEOUT_FACTOR='${GUEST_TIMEOUT_FACTOR}'`,
      `export PATH="${paths.bin()}:${simBinDir()}:$PATH"`,
      '',
    ].join('\n'),
  );
  say(`guest ready: kernel ${kernel}, ${guestDockerHost()}`);
  return {
    env,
    nodeImage: host.nodeImage,
    overlay,
    components: { ...host.components, kernel, engine: 'Docker in a QEMU guest' },
    bootSeconds,
  };
}
