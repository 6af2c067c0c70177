/**
 * Images without a registry or a Dockerfile: layers are tar files of folders, and an image is a
 * docker-archive (what `docker save` writes and `docker load`, `ctr images import` and kind's
 * node-image builder read): `manifest.json`, one config JSON per image and `<digest>/layer.tar`
 * per layer. One archive may hold several images.
 *
 * The `repositories` file comes first in the archive and names every image's tags: kind's
 * builder reads the first of `manifest.json` and `repositories` it meets, and from
 * `manifest.json` only the first image's tags, so an archive that lists all its images there is
 * how images beyond kind's four (etcd, CoreDNS, pause, kindnetd) count as built, not to be pulled.
 */
import { createHash } from 'node:crypto';
import { createReadStream, linkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { run } from '../../scripts/base/exec.ts';

interface ImageConfig {
  Env?: string[];
  Entrypoint?: string[];
  Cmd?: string[];
  WorkingDir?: string;
  User?: string;
  StopSignal?: string;
  Labels?: Record<string, string>;
}

export interface ImageSpec {
  /** Full references (`registry.k8s.io/pause:3.10`). */
  tags: readonly string[];
  /** Layer tar files, lowest first. */
  layers: readonly string[];
  config: ImageConfig;
}

export const DEFAULT_PATH = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (c) => h.update(c))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}

/** Tar a folder as a layer: sorted, owners as numbers, times at 0, so the same folder gives the same digest. */
export async function tarLayer(dir: string, out: string, signal?: AbortSignal): Promise<void> {
  mkdirSync(dirname(out), { recursive: true });
  await run('tar', ['-C', dir, '--numeric-owner', '--sort=name', '--mtime=@0', '-cf', `${out}.tmp`, '.'], {
    timeoutMs: 20 * 60_000,
    signal,
  });
  await run('mv', [`${out}.tmp`, out], { timeoutMs: 60_000 });
}

/** "registry.k8s.io/pause:3.10" → ["registry.k8s.io/pause", "3.10"]. */
export function splitTag(ref: string): [string, string] {
  const at = ref.lastIndexOf(':');
  if (at <= ref.lastIndexOf('/')) throw new Error(`${ref} has no tag`);
  return [ref.slice(0, at), ref.slice(at + 1)];
}

/** Write one docker-archive holding these images. Layers are hard-linked in when they share the disk. */
export async function writeDockerArchive(images: readonly ImageSpec[], out: string, signal?: AbortSignal): Promise<void> {
  mkdirSync(dirname(out), { recursive: true });
  const work = mkdtempSync(join(dirname(out), '.archive-'));
  try {
    const files: string[] = [];
    const manifest: { Config: string; RepoTags: string[]; Layers: string[] }[] = [];
    const repositories: Record<string, Record<string, string>> = {};
    const digests = new Map<string, string>();
    for (const image of images) {
      const diffIds: string[] = [];
      const layers: string[] = [];
      for (const layer of image.layers) {
        let digest = digests.get(layer);
        if (!digest) {
          digest = await sha256File(layer);
          digests.set(layer, digest);
          mkdirSync(join(work, digest), { recursive: true });
          try {
            linkSync(layer, join(work, digest, 'layer.tar'));
          } catch {
            await run('cp', [layer, join(work, digest, 'layer.tar')], { timeoutMs: 10 * 60_000, signal });
          }
          files.push(`${digest}/layer.tar`);
        }
        diffIds.push(`sha256:${digest}`);
        layers.push(`${digest}/layer.tar`);
      }
      const config = {
        architecture: 'amd64',
        os: 'linux',
        created: '1970-01-01T00:00:00Z',
        config: image.config,
        rootfs: { type: 'layers', diff_ids: diffIds },
        history: diffIds.map(() => ({ created: '1970-01-01T00:00:00Z', created_by: 'dplab test environment (test/kind/)' })),
      };
      const text = JSON.stringify(config);
      const configName = `${createHash('sha256').update(text).digest('hex')}.json`;
      writeFileSync(join(work, configName), text);
      files.push(configName);
      manifest.push({ Config: configName, RepoTags: [...image.tags], Layers: layers });
      for (const tag of image.tags) {
        const [repo, t] = splitTag(tag);
        (repositories[repo] ??= {})[t] = diffIds.at(-1)!.slice('sha256:'.length);
      }
    }
    writeFileSync(join(work, 'repositories'), JSON.stringify(repositories));
    writeFileSync(join(work, 'manifest.json'), JSON.stringify(manifest));
    await run('tar', ['-C', work, '--numeric-owner', '-cf', `${out}.tmp`, 'repositories', 'manifest.json', ...files], {
      timeoutMs: 20 * 60_000,
      signal,
    });
    await run('mv', [`${out}.tmp`, out], { timeoutMs: 60_000 });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
