/**
 * The node image a cluster's workers start from: kind's node image with the labs' images already
 * in its containerd store. Built once per node image and set of lab images and kept in Docker,
 * so a start imports nothing: `kind load` of agnhost into two workers beside `kind create` cost
 * about 8 s of a 42 s start on 2 cores (measured), and every start paid it.
 *
 * Built the way kind builds its own node images: a container of the node image with only
 * containerd running in it, `ctr images import --no-unpack` (the first pod to use an image unpacks
 * it, as it does kind's own images), then `docker commit` with the node image's entrypoint back.
 * When a worker is created, Docker fills its `/var` volume from the image, images included.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandError, howItEnded, run, tellingLine, type RunOptions } from '../base/exec.ts';

/** Where the built images are kept: `<repository>:<hash of the node image and the lab images>`. */
export const LAB_NODE_REPOSITORY = 'dplab.local/kind-node-labs';
/** The label every built image carries, so older ones can be found and removed. */
const LABEL = 'dplab.lab-node-image';

export interface LabNodeImageOptions {
  /** The node image kind would run (nodeImage()). */
  base: string;
  /** The lab images to put in; those Docker does not have are left out (the nodes pull them). */
  images: readonly string[];
  signal?: AbortSignal;
  /** Bound of each quick read (`docker image inspect`). */
  quickMs: number;
  /** Bound of the pull, the save and the import, each. */
  longMs: number;
  /** A line for the progress view. */
  note(message: string): void;
}

/**
 * The image for the workers, built now if it does not exist yet; undefined when no lab image is
 * here to put in, or the build failed (said in a note: the nodes then pull the images themselves).
 */
export async function labNodeImage(o: LabNodeImageOptions): Promise<string | undefined> {
  const quick: RunOptions = { timeoutMs: o.quickMs, signal: o.signal };
  const present: Array<{ image: string; id: string }> = [];
  for (const image of o.images) {
    const id = await imageId(image, quick);
    if (id) present.push({ image, id });
    else o.note(`Skipped ${image}: not present locally (the nodes will pull it when a lab needs it).`);
  }
  if (present.length === 0) return undefined;
  try {
    let baseId = await imageId(o.base, quick);
    if (!baseId) {
      // kind would pull it first thing too; pulled here, the lab images can go in before it starts.
      await run('docker', ['pull', o.base], { timeoutMs: o.longMs, signal: o.signal });
      baseId = await imageId(o.base, quick);
      if (!baseId) throw new Error(`${o.base} is not there after \`docker pull\``);
    }
    const tag = `${LAB_NODE_REPOSITORY}:${labNodeHash(
      baseId,
      present.map((p) => p.id),
    )}`;
    if (await imageId(tag, quick)) return tag;
    await (building.get(tag) ??
      track(
        tag,
        build(
          o,
          tag,
          present.map((p) => p.image),
        ),
      ));
    return tag;
  } catch (err) {
    if (o.signal?.aborted || (err instanceof CommandError && err.kind === 'aborted')) throw err;
    const why = err instanceof CommandError ? tellingLine(err.stderr) || howItEnded(err) : err instanceof Error ? err.message : String(err);
    o.note(`Could not put the lab images into the node image (${why.slice(0, 200)}); the nodes will pull them when a lab needs them.`);
    return undefined;
  }
}

/** The tag's hash: the node image's and every lab image's id, so a new version of either makes a new image. */
export function labNodeHash(baseId: string, imageIds: readonly string[]): string {
  return createHash('sha256')
    .update([baseId, ...[...imageIds].sort()].join('\n'))
    .digest('hex')
    .slice(0, 16);
}

/** Builds in this process, by tag: two modes starting at once wait for the same build. */
const building = new Map<string, Promise<void>>();

function track(tag: string, work: Promise<void>): Promise<void> {
  building.set(tag, work);
  return work.finally(() => building.delete(tag));
}

async function imageId(ref: string, opts: RunOptions): Promise<string | undefined> {
  try {
    return (await run('docker', ['image', 'inspect', '--format', '{{.Id}}', ref], opts)).stdout.trim() || undefined;
  } catch (err) {
    if (err instanceof CommandError && err.kind === 'failed') return undefined;
    throw err;
  }
}

/**
 * In the build container: containerd alone (no systemd), the images imported without unpacking
 * (the container's own filesystem is an overlay, on which containerd's overlay snapshots cannot
 * be made), then containerd stopped cleanly so its store is whole when committed.
 */
const IMPORT_SCRIPT = [
  'set -e',
  'containerd >/tmp/dplab-containerd.log 2>&1 &',
  'pid=$!',
  'i=0',
  'until ctr --namespace k8s.io version >/dev/null 2>&1; do',
  '  i=$((i+1)); if [ "$i" -ge 300 ]; then tail -5 /tmp/dplab-containerd.log >&2; exit 1; fi; sleep 0.1',
  'done',
  'ctr --namespace k8s.io images import --all-platforms --no-unpack --digests "$1"',
  'kill "$pid"; wait "$pid" || true',
  'rm -f "$1" /tmp/dplab-containerd.log',
].join('\n');

async function build(o: LabNodeImageOptions, tag: string, images: readonly string[]): Promise<void> {
  const long: RunOptions = { timeoutMs: o.longMs, signal: o.signal };
  const quick: RunOptions = { timeoutMs: o.quickMs, signal: o.signal };
  const started = Date.now();
  const entrypoint = (
    await run('docker', ['image', 'inspect', '--format', '{{json .Config.Entrypoint}}|{{json .Config.Cmd}}', o.base], quick)
  ).stdout
    .trim()
    .split('|');
  const container = `dplab-lab-node-${randomBytes(4).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'dplab-lab-images-'));
  const archive = join(dir, 'images.tar');
  try {
    await run('docker', ['save', '--output', archive, ...images], long);
    await run(
      'docker',
      ['run', '--detach', '--name', container, '--entrypoint', 'sleep', '--security-opt', 'seccomp=unconfined', o.base, 'infinity'],
      long,
    );
    await run('docker', ['cp', archive, `${container}:/tmp/dplab-images.tar`], long);
    await run('docker', ['exec', container, 'sh', '-c', IMPORT_SCRIPT, 'sh', '/tmp/dplab-images.tar'], long);
    const json = (v: string | undefined) => (!v || v === 'null' ? '[]' : v);
    const changes = [`ENTRYPOINT ${json(entrypoint[0])}`, `CMD ${json(entrypoint[1])}`, `LABEL ${LABEL}=${images.join(',')}`];
    await run('docker', ['commit', ...changes.flatMap((c) => ['--change', c]), container, tag], long);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await run('docker', ['rm', '--force', container], { timeoutMs: o.quickMs }).catch(() => undefined);
  }
  o.note(
    `Built ${tag}: the node image with ${images.join(', ')} inside, in ${Math.round((Date.now() - started) / 1000)} s (once; later starts reuse it).`,
  );
  await removeOlder(tag, quick);
}

/** Earlier builds (another node image or lab image version); one a cluster still runs on stays. */
async function removeOlder(keep: string, opts: RunOptions): Promise<void> {
  try {
    const listed = await run('docker', ['image', 'ls', '--filter', `label=${LABEL}`, '--format', '{{.Repository}}:{{.Tag}}'], opts);
    for (const ref of listed.stdout.split('\n').map((l) => l.trim())) {
      if (!ref || ref === keep || !ref.startsWith(`${LAB_NODE_REPOSITORY}:`)) continue;
      await run('docker', ['image', 'rm', ref], opts).catch(() => undefined);
    }
  } catch {
    // Tidying only.
  }
}
