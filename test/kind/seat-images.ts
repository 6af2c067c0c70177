/**
 * A workshop seat's two images, built here as every other image of this environment (nothing is
 * pulled), and loaded into the test environment's engine:
 * - the runner (scripts/portal/image/Dockerfile's content): this checkout's `dplab` with the built
 *   course and its production node_modules, Node, kind, kubectl, helm and the Docker CLI, run as
 *   uid 1000. Versus the Dockerfile: Debian's tools layer instead of node:20-bookworm-slim, this
 *   machine's Node, the Docker CLI from Debian's docker.io (20.10) instead of docker:28.5.1-cli,
 *   and Cilium's chart in the image with a kind overlay naming it (a seat here cannot reach the
 *   Helm repository);
 * - the Docker-in-Docker sidecar: Debian's docker.io instead of docker:28.5.1-dind. Its command
 *   is dockerd itself (the seat pod's args start with `dockerd`, as docker:dind's entrypoint
 *   expects).
 *
 * Two adaptations to this host, both said where they are made:
 * - root here lacks CAP_SYS_RESOURCE, so the sidecar's dockerd runs kind's privileged nodes
 *   through dplab-runc, as the environment's own engine does (/etc/docker/daemon.json);
 * - the host is cgroup v1, where the nodes of a kind cluster nested in a seat need the kubelet's
 *   cgroupfs driver (seatOverlay below).
 */
import { chownSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../../scripts/base/exec.ts';
import { distDir, projectRoot } from '../../scripts/base/paths.ts';
import type { KindOverlay } from '../../scripts/clusters/kind-overlay.ts';
import { KIND_OVERLAY_ENV } from '../../scripts/clusters/kind-overlay.ts';
import { simBinDir } from '../../scripts/sim/build.ts';
import { DEFAULT_PATH, writeDockerArchive, type ImageSpec } from './docker-archive.ts';
import { ensureLayer, walk } from './layers.ts';
import { hashOf, isFresh, paths, stamp, stampOf } from './layout.ts';
import { dockerLoad, imagePresent } from './node-image.ts';
import { ensureRootfs, ROOTFS } from './rootfs.ts';
import type { RunOptions } from '../../scripts/base/exec.ts';

const SEAT_RUNNER_REPO = 'dplab.local/dataplane-lab/runner';
const SEAT_DIND_REPO = 'dplab.local/dataplane-lab/dind';
/** The runner image's user (the Dockerfile's node image user), with a home of its own. */
const RUNNER_USER = { uid: 1000, name: 'dplab', home: '/home/dplab' };
const APP_DIR = 'opt/dplab';
const CHART_DIR = 'opt/cilium-chart';
const OVERLAY_PATH = 'etc/dplab/kind-overlay.json';

export interface SeatImages {
  runner: string;
  dind: string;
}

export interface SeatImageInputs {
  /** The environment's overlay (its node image, its kubeadm and containerd patches, Cilium's values). */
  overlay: KindOverlay;
  cgroupV1: boolean;
  lacksSysResource: boolean;
  engine: RunOptions;
  say: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * The overlay a seat's own kind uses: the environment's, with the chart at its place in the image
 * and, on a cgroup v1 host, the kubelet and containerd on the cgroupfs driver. Measured here: with
 * the systemd driver a nested cluster's control plane came up but every worker's kubelet stopped
 * at "cgroup [kubelet kubepods] has some missing paths: /sys/fs/cgroup/systemd/kubelet.slice/
 * kubelet-kubepods.slice"; with cgroupfs all three nodes were Ready in 47 s.
 */
function seatOverlay(overlay: KindOverlay, cgroupV1: boolean): KindOverlay {
  return {
    ...overlay,
    name: `${overlay.name}, in a workshop seat's Docker`,
    kubeadmConfigPatches: cgroupV1
      ? [...overlay.kubeadmConfigPatches, 'kind: KubeletConfiguration\ncgroupDriver: cgroupfs\n']
      : overlay.kubeadmConfigPatches,
    containerdConfigPatches: cgroupV1
      ? [
          ...overlay.containerdConfigPatches,
          '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]\n  SystemdCgroup = false\n',
        ]
      : overlay.containerdConfigPatches,
    ...(overlay.cilium ? { cilium: { ...overlay.cilium, chart: `/${CHART_DIR}` } } : {}),
  };
}

/** What decides the app folder's content: the tracked files as they are now, and the two builds. */
function appHash(): Promise<string> {
  return Promise.all([
    run('git', ['ls-files', '-s'], { cwd: projectRoot, timeoutMs: 60_000 }),
    run('git', ['diff', 'HEAD'], { cwd: projectRoot, timeoutMs: 60_000 }),
  ]).then(([index, diff]) => {
    const listing = (dir: string) =>
      existsSync(dir) ? walk(dir).map((rel) => `${rel}:${statSync(join(dir, rel)).size}:${statSync(join(dir, rel)).mtimeMs}`) : [];
    return hashOf(index.stdout, diff.stdout, listing(distDir), listing(join(projectRoot, 'dist-cli')), RUNNER_USER);
  });
}

/**
 * The app as the Dockerfile makes it (`COPY . .`, the builds, production modules only), in a
 * folder that becomes one layer: the tracked files, dist/ and a freshly checked dist-cli/,
 * `npm ci --omit=dev`, all owned by the runner's user.
 */
async function ensureAppFolder(say: (l: string) => void, signal?: AbortSignal): Promise<string> {
  const dir = paths.rootfs('seat-app');
  // The compiled CLI must be the sources' own, as the Dockerfile's build makes it: the layer's
  // files carry no times, so a seat cannot see that dist-cli/ is older than a source and would
  // run it as it is (a stale CLI once hid a preflight fix from the seat). dplab's entry point
  // compiles it again when a source is newer than the build.
  await run(process.execPath, [join(projectRoot, 'scripts/dplab.mjs'), 'help'], { cwd: projectRoot, timeoutMs: 120_000, signal });
  const hash = await appHash();
  if (isFresh(dir, hash)) return dir;
  const started = Date.now();
  rmSync(dir, { recursive: true, force: true });
  const app = join(dir, APP_DIR);
  mkdirSync(app, { recursive: true });
  await run('bash', ['-c', 'git ls-files -z | tar --null --ignore-failed-read -T - -cf - | tar -C "$1" -xf -', 'copy', app], {
    cwd: projectRoot,
    timeoutMs: 10 * 60_000,
    signal,
  });
  for (const d of ['dist', 'dist-cli']) cpSync(join(projectRoot, d), join(app, d), { recursive: true, preserveTimestamps: true });
  await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: app,
    timeoutMs: 15 * 60_000,
    signal,
  });
  // The user the seat pod runs as, with a home: bash, kind and helm write there.
  const home = join(dir, RUNNER_USER.home.slice(1));
  mkdirSync(home, { recursive: true });
  mkdirSync(join(dir, 'var/lib/dplab'), { recursive: true });
  const tools = paths.rootfs(ROOTFS.tools.name);
  const { uid, name } = RUNNER_USER;
  mkdirSync(join(dir, 'etc'), { recursive: true });
  writeFileSync(
    join(dir, 'etc/passwd'),
    `${readFileSync(join(tools, 'etc/passwd'), 'utf8').trimEnd()}\n${name}:x:${uid}:${uid}:Dataplane Lab:${RUNNER_USER.home}:/bin/bash\n`,
  );
  writeFileSync(join(dir, 'etc/group'), `${readFileSync(join(tools, 'etc/group'), 'utf8').trimEnd()}\n${name}:x:${uid}:\n`);
  await run('chown', ['-R', `${uid}:${uid}`, app, home, join(dir, 'var/lib/dplab')], { timeoutMs: 5 * 60_000, signal });
  chownSync(dir, 0, 0);
  stamp(dir, hash);
  say(`seat app folder: made in ${Math.round((Date.now() - started) / 1000)} s`);
  return dir;
}

/** Build (or reuse) both images and load them into the engine; resolves with their references. */
export async function ensureSeatImages(i: SeatImageInputs): Promise<SeatImages> {
  const { say, signal } = i;
  const bin = paths.bin();
  const [tools, dindRoot] = [await ensureRootfs(ROOTFS.tools, say, signal), await ensureRootfs(ROOTFS.dind, say, signal)];
  const app = await ensureAppFolder(say, signal);

  const generated = join(paths.rootfs('seat-app'), '..', 'seat-generated');
  mkdirSync(generated, { recursive: true });
  const overlay = seatOverlay(i.overlay, i.cgroupV1);
  writeFileSync(join(generated, 'kind-overlay.json'), `${JSON.stringify(overlay, null, 2)}\n`);
  // dockerd's configuration in the sidecar: dplab-runc only where this host needs it.
  const daemon = i.lacksSysResource
    ? { runtimes: { 'dplab-runc': { path: '/usr/local/bin/dplab-runc' } }, 'default-runtime': 'dplab-runc' }
    : {};
  writeFileSync(join(generated, 'daemon.json'), `${JSON.stringify(daemon, null, 2)}\n`);

  const chart = i.overlay.cilium?.chart;
  const layerFiles = {
    tools: await ensureLayer({ name: 'tools', rootfs: tools }, say, signal),
    seatTools: await ensureLayer(
      {
        name: 'seat-tools',
        files: [
          { from: process.execPath, to: 'usr/local/bin/node' },
          { from: join(bin, 'kind'), to: 'usr/local/bin/kind' },
          { from: join(bin, 'helm'), to: 'usr/local/bin/helm' },
          { from: join(simBinDir(), 'kubectl'), to: 'usr/local/bin/kubectl' },
          { from: join(dindRoot, 'usr/bin/docker'), to: 'usr/local/bin/docker' },
          { from: join(generated, 'kind-overlay.json'), to: OVERLAY_PATH, mode: 0o644 },
        ],
        trees: chart ? [{ from: chart, to: CHART_DIR }] : [],
        dirs: [['tmp', 0o1777]],
      },
      say,
      signal,
    ),
    app: await ensureLayer({ name: 'seat-app', rootfs: app }, say, signal),
    dind: await ensureLayer({ name: 'dind', rootfs: dindRoot }, say, signal),
    dindRuntime: await ensureLayer(
      {
        name: 'dind-runtime',
        files: [
          { from: join(bin, 'dplab-runc'), to: 'usr/local/bin/dplab-runc' },
          { from: join(generated, 'daemon.json'), to: 'etc/docker/daemon.json', mode: 0o644 },
        ],
      },
      say,
      signal,
    ),
  };
  const tag = (repo: string, ...layers: string[]) => `${repo}:${hashOf(...layers.map(stampOf))}`;
  const runnerLayers = [layerFiles.tools, layerFiles.seatTools, layerFiles.app];
  const dindLayers = [layerFiles.dind, layerFiles.dindRuntime];
  const images: ImageSpec[] = [
    {
      tags: [tag(SEAT_RUNNER_REPO, ...runnerLayers)],
      layers: runnerLayers,
      config: {
        Env: [
          DEFAULT_PATH,
          'NODE_ENV=production',
          'DPLAB_STATE_DIR=/var/lib/dplab',
          `HOME=${RUNNER_USER.home}`,
          `${KIND_OVERLAY_ENV}=/${OVERLAY_PATH}`,
        ],
        WorkingDir: `/${APP_DIR}`,
        User: `${RUNNER_USER.uid}:${RUNNER_USER.uid}`,
        Entrypoint: ['node', `/${APP_DIR}/scripts/dplab.mjs`],
        Cmd: ['serve', '--host', '0.0.0.0', '--port', '4321'],
      },
    },
    { tags: [tag(SEAT_DIND_REPO, ...dindLayers)], layers: dindLayers, config: { Env: [DEFAULT_PATH], Cmd: ['dockerd'] } },
  ];
  const [runner, dind] = images.map((im) => im.tags[0]);
  const archive = paths.archive('seat-images');
  const archiveHash = hashOf(runner, dind);
  const present = await Promise.all([runner, dind].map((r) => imagePresent(r, i.engine)));
  if (!isFresh(archive, archiveHash) || present.includes(false)) {
    await writeDockerArchive(images, archive, signal);
    await dockerLoad(archive, i.engine);
    stamp(archive, archiveHash);
    say(`seat images: loaded ${runner}, ${dind}`);
  }
  return { runner, dind };
}
