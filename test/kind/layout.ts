/**
 * Where the kind test environment keeps what it builds and runs, all outside the repository:
 * `${DPLAB_TESTENV_CACHE:-~/.cache/dplab/testenv}`. Every artefact has a stamp next to it (the
 * hash of what made it), so a second `up` reuses it and a changed input rebuilds only that.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export function cacheDir(): string {
  return resolve(process.env.DPLAB_TESTENV_CACHE ?? join(homedir(), '.cache', 'dplab', 'testenv'));
}

export const paths = {
  /** Go-built programs (kind, containerd, runc, kubeadm, cilium-agent, …). */
  bin: () => join(cacheDir(), 'bin'),
  /** debootstrap'd root filesystems, one folder each. */
  rootfs: (name: string) => join(cacheDir(), 'rootfs', name),
  /** Image layers as tar files. */
  layer: (name: string) => join(cacheDir(), 'layers', `${name}.tar`),
  /** docker-archive files (`docker load` input, kind's node-image input). */
  archive: (name: string) => join(cacheDir(), 'archives', `${name}.tar`),
  /** The Docker engine's data root; its exec root and socket sit under /run (short socket paths). */
  engineData: () => join(cacheDir(), 'engine', 'data'),
  engineLog: () => join(cacheDir(), 'engine', 'dockerd.log'),
  engineRun: () => resolve(process.env.DPLAB_TESTENV_RUN ?? '/run/dplab-testenv'),
  /** The kind overlay (DPLAB_KIND_OVERLAY) and the shell environment `npm run testenv -- env` prints. */
  overlay: () => join(cacheDir(), 'overlay.json'),
  envFile: () => join(cacheDir(), 'env.sh'),
};

export const engineSocket = () => join(paths.engineRun(), 'docker.sock');
export const engineHost = () => `unix://${engineSocket()}`;

export function hashOf(...parts: unknown[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(typeof p === 'string' ? p : JSON.stringify(p)).update('\0');
  return h.digest('hex').slice(0, 16);
}

const stampPath = (artefact: string) => join(dirname(artefact), `.${artefact.split('/').pop()}.stamp`);

/** True when the artefact exists and was made from inputs with this hash. */
export function isFresh(artefact: string, hash: string): boolean {
  return existsSync(artefact) && existsSync(stampPath(artefact)) && readFileSync(stampPath(artefact), 'utf8').trim() === hash;
}

export function stamp(artefact: string, hash: string): void {
  mkdirSync(dirname(artefact), { recursive: true });
  writeFileSync(stampPath(artefact), `${hash}\n`);
}

/** The stamp an artefact carries (its inputs' hash), or '' when it has none. */
export function stampOf(artefact: string): string {
  try {
    return readFileSync(stampPath(artefact), 'utf8').trim();
  } catch {
    return '';
  }
}
