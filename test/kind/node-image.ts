/**
 * The kind node image, made the way kind makes it but from local parts:
 * 1. the base image: kind v0.31.0's images/base/Dockerfile done by hand on a debootstrap'd
 *    root filesystem (its files from the kind module, its systemd clean-up, containerd, runc,
 *    crictl and the CNI plugins built from their modules), loaded as one layer with the
 *    Dockerfile's ENV, STOPSIGNAL and ENTRYPOINT;
 * 2. a `kubernetes-server-linux-amd64.tar.gz` of our own (kubeadm, kubelet, kubectl and the
 *    image archives, which also carry every other image the node needs), then kind's own
 *    `kind build node-image --type file`, so the /kind files, the CNI and storage manifests and
 *    the image import are kind's.
 * Both are tagged with the hash of their inputs (`dplab.local/…:<hash>`): a tag that exists in the
 * engine is the stamp.
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  chmodSync,
  unlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { CommandError, run, type RunOptions } from '../../scripts/base/exec.ts';
import { DplabError } from '../../scripts/base/errors.ts';
import { projectRoot } from '../../scripts/base/paths.ts';
import { KUBERNETES_VERSION } from '../../scripts/base/versions.ts';
import { DEFAULT_PATH, tarLayer, writeDockerArchive, type ImageSpec } from './docker-archive.ts';
import { hashOf, isFresh, paths, stamp, stampOf } from './layout.ts';

const BASE_IMAGE_REPO = 'dplab.local/kind-base';
const NODE_IMAGE_REPO = 'dplab.local/kindest-node';

/** Where a wrapper module's dependency lives in the module cache (downloaded if needed). */
export async function goModuleDir(moduleDir: string, module: string, signal?: AbortSignal): Promise<string> {
  const cwd = join(projectRoot, moduleDir);
  await run('go', ['mod', 'download', module], { cwd, timeoutMs: 20 * 60_000, signal });
  const r = await run('go', ['list', '-m', '-f', '{{.Dir}}', module], { cwd, timeoutMs: 120_000, signal });
  return r.stdout.trim();
}

/** The pause binary, compiled as k8s.io/kubernetes' build/pause/Makefile does (static, -Os). */
export async function ensurePause(k8sModule: string, say: (l: string) => void, signal?: AbortSignal): Promise<string> {
  const src = join(k8sModule, 'build', 'pause', 'linux', 'pause.c');
  const out = join(paths.bin(), 'pause');
  const hash = hashOf(readFileSync(src, 'utf8'), '3.10.1');
  if (isFresh(out, hash)) return out;
  mkdirSync(paths.bin(), { recursive: true });
  try {
    await run('gcc', ['-Os', '-Wall', '-Werror', '-static', '-DVERSION=v3.10.1', '-o', out, src], { timeoutMs: 120_000, signal });
  } catch (err) {
    throw new DplabError('Compiling the pause program failed (it needs gcc and the static C library).', {
      fix: 'Install them: sudo apt-get install gcc libc6-dev',
      details: err instanceof CommandError ? err.details : String(err),
    });
  }
  stamp(out, hash);
  say('pause 3.10.1: compiled');
  return out;
}

export async function imagePresent(ref: string, opts: RunOptions): Promise<boolean> {
  try {
    await run('docker', ['image', 'inspect', '--format', '{{.Id}}', ref], { timeoutMs: 30_000, ...opts });
    return true;
  } catch (err) {
    if (err instanceof CommandError && err.kind === 'failed') return false;
    throw err;
  }
}

export async function dockerLoad(archive: string, opts: RunOptions): Promise<void> {
  await run('docker', ['load', '-i', archive], { timeoutMs: 20 * 60_000, ...opts });
}

export interface BaseInputs {
  rootfs: string;
  /** sigs.k8s.io/kind@v0.31.0 in the module cache. */
  kindModule: string;
  bin(name: string): string;
}

/** kind's images/base/Dockerfile, step by step, into a staging copy of the root filesystem. */
async function stageBase(i: BaseInputs, stage: string, signal?: AbortSignal): Promise<void> {
  const files = join(i.kindModule, 'images', 'base', 'files');
  rmSync(stage, { recursive: true, force: true });
  await run('cp', ['-a', i.rootfs, stage], { timeoutMs: 10 * 60_000, signal });
  const put = (from: string, to: string, mode: number) => {
    mkdirSync(join(stage, to, '..'), { recursive: true });
    cpSync(from, join(stage, to));
    chmodSync(join(stage, to), mode);
  };
  const each = (dir: string, to: string, mode: number) => {
    for (const e of readdirSync(join(files, dir), { withFileTypes: true }))
      if (e.isFile()) put(join(files, dir, e.name), join(to, e.name), mode);
  };
  each('usr/local/bin', 'usr/local/bin', 0o755);
  each('kind', 'kind', 0o644);
  each('kind/bin', 'kind/bin', 0o755);
  each('LICENSES', 'LICENSES', 0o644);
  each('etc', 'etc', 0o644);
  each('etc/containerd', 'etc/containerd', 0o644);
  each('etc/default', 'etc/default', 0o644);
  each('etc/sysctl.d', 'etc/sysctl.d', 0o644);
  each('etc/systemd/system', 'etc/systemd/system', 0o644);
  each('etc/systemd/system/kubelet.service.d', 'etc/systemd/system/kubelet.service.d', 0o644);
  chmodSync(join(stage, 'kind', 'bin'), 0o755);
  // The Dockerfile's clean-up of units that must not run in a node container.
  const clear = (dir: string, match: (n: string) => boolean) => {
    const d = join(stage, dir);
    if (!existsSync(d)) return;
    for (const n of readdirSync(d)) if (match(n)) rmSync(join(d, n), { force: true, recursive: true });
  };
  clear('lib/systemd/system/sysinit.target.wants', (n) => n === 'systemd-tmpfiles-setup.service');
  clear('lib/systemd/system/multi-user.target.wants', () => true);
  for (const wants of readdirSync(join(stage, 'etc/systemd/system')).filter((n) => n.endsWith('.wants')))
    clear(`etc/systemd/system/${wants}`, () => true);
  clear('lib/systemd/system/local-fs.target.wants', () => true);
  clear('lib/systemd/system/sockets.target.wants', (n) => n.includes('udev') || n.includes('initctl'));
  clear('lib/systemd/system/basic.target.wants', () => true);
  writeFileSync(join(stage, 'etc/systemd/journald.conf'), `${readFileSync(join(stage, 'etc/systemd/journald.conf'), 'utf8')}ReadKMsg=no\n`);
  if (existsSync(join(stage, 'sbin/init'))) unlinkSync(join(stage, 'sbin/init'));
  symlinkSync('/lib/systemd/systemd', join(stage, 'sbin/init'));
  for (const b of ['containerd', 'ctr', 'containerd-shim-runc-v2', 'crictl']) put(i.bin(b), `usr/local/bin/${b}`, 0o755);
  put(i.bin('runc'), 'usr/local/sbin/runc', 0o755);
  for (const b of ['host-local', 'loopback', 'ptp', 'portmap']) put(i.bin(b), `opt/cni/bin/${b}`, 0o755);
  mkdirSync(join(stage, 'etc/kubernetes/manifests'), { recursive: true });
  const chroot = (args: string[]) => run('chroot', [stage, ...args], { timeoutMs: 120_000, signal });
  await chroot(['systemctl', 'enable', 'kubelet.service', 'containerd.service', 'undo-mount-hacks.service']);
  await chroot(['systemctl', 'mask', 'systemd-binfmt.service']);
  // `ctr oci spec` with kind's createContainer hook and without rlimits, as the Dockerfile does with jq.
  const spec = JSON.parse((await chroot(['/usr/local/bin/ctr', 'oci', 'spec'])).stdout) as {
    hooks?: { createContainer?: { path: string }[] };
    process?: { rlimits?: unknown };
  };
  spec.hooks = { ...spec.hooks, createContainer: [...(spec.hooks?.createContainer ?? []), { path: '/kind/bin/mount-product-files.sh' }] };
  if (spec.process) delete spec.process.rlimits;
  writeFileSync(join(stage, 'etc/containerd/cri-base.json'), `${JSON.stringify(spec, null, 2)}\n`);
}

/** The base image; resolves with its reference. */
export async function ensureBaseImage(i: BaseInputs, engine: RunOptions, say: (l: string) => void, signal?: AbortSignal): Promise<string> {
  const names = ['containerd', 'ctr', 'containerd-shim-runc-v2', 'crictl', 'runc', 'host-local', 'loopback', 'ptp', 'portmap'];
  const hash = hashOf(stampOf(i.rootfs), i.kindModule, ...names.map((n) => stampOf(i.bin(n))), 'base-v1');
  const ref = `${BASE_IMAGE_REPO}:${hash}`;
  if (await imagePresent(ref, engine)) {
    say(`kind base image: already built (${ref})`);
    return ref;
  }
  const started = Date.now();
  say('kind base image: building from the kind-base root filesystem and kind v0.31.0 images/base/files…');
  const stage = paths.layer('kind-base.d');
  await stageBase(i, stage, signal);
  const layer = paths.layer('kind-base');
  await tarLayer(stage, layer, signal);
  rmSync(stage, { recursive: true, force: true });
  const image: ImageSpec = {
    tags: [ref],
    layers: [layer],
    config: { Env: [DEFAULT_PATH, 'container=docker'], StopSignal: 'SIGRTMIN+3', Entrypoint: ['/usr/local/bin/entrypoint', '/sbin/init'] },
  };
  const archive = paths.archive('kind-base');
  await writeDockerArchive([image], archive, signal);
  await dockerLoad(archive, { ...engine, signal });
  rmSync(archive, { force: true });
  say(`kind base image: built in ${Math.round((Date.now() - started) / 1000)} s`);
  return ref;
}

export interface NodeInputs {
  baseImage: string;
  bin(name: string): string;
  /** Archive name (kube-apiserver, …) → the images it holds. */
  archives: Record<string, readonly ImageSpec[]>;
  /** Hash of every layer in those archives. */
  imagesHash: string;
}

/** The node image; resolves with its reference. */
export async function ensureNodeImage(i: NodeInputs, engine: RunOptions, say: (l: string) => void, signal?: AbortSignal): Promise<string> {
  const hash = hashOf(i.baseImage, i.imagesHash, ...['kubeadm', 'kubelet', 'kubectl'].map((b) => stampOf(i.bin(b))), 'node-v1');
  const ref = `${NODE_IMAGE_REPO}:v${KUBERNETES_VERSION}-${hash}`;
  if (await imagePresent(ref, engine)) {
    say(`node image: already built (${ref})`);
    return ref;
  }
  const started = Date.now();
  say(`node image: kind build node-image from ${i.baseImage}…`);
  const work = paths.archive('kubernetes-server.d');
  rmSync(work, { recursive: true, force: true });
  const bin = join(work, 'kubernetes', 'server', 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(work, 'kubernetes', 'version'), `v${KUBERNETES_VERSION}\n`);
  for (const b of ['kubeadm', 'kubelet', 'kubectl']) cpSync(i.bin(b), join(bin, b));
  for (const [name, images] of Object.entries(i.archives)) await writeDockerArchive(images, join(bin, `${name}.tar`), signal);
  const tarball = paths.archive('kubernetes-server-linux-amd64');
  await run('tar', ['-C', work, '-czf', `${tarball}.tar.gz`, 'kubernetes'], { timeoutMs: 20 * 60_000, signal });
  rmSync(work, { recursive: true, force: true });
  try {
    await run('kind', ['build', 'node-image', '--type', 'file', `${tarball}.tar.gz`, '--base-image', i.baseImage, '--image', ref], {
      ...engine,
      timeoutMs: 30 * 60_000,
      signal,
    });
  } finally {
    rmSync(`${tarball}.tar.gz`, { force: true });
  }
  say(`node image: built in ${Math.round((Date.now() - started) / 1000)} s (${ref})`);
  return ref;
}
