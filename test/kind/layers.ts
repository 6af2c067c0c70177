/**
 * Image layers as data: a layer is a root filesystem, or files, trees, links and folders put at
 * paths in the image. Its stamp is the hash of its spec and of every input (a Go build's own
 * stamp, a root filesystem's stamp, or the bytes of a small file), so it is made again only when
 * one of them changed.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, chmodSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { tarLayer } from './docker-archive.ts';
import { hashOf, isFresh, paths, stamp, stampOf } from './layout.ts';

interface LayerFile {
  from: string;
  /** Path inside the image, without the leading slash. */
  to: string;
  mode?: number;
}

interface LayerTree {
  from: string;
  to: string;
  /** Which files of the tree (relative paths) to take; all by default. */
  keep?: (rel: string) => boolean;
}

export interface LayerSpec {
  name: string;
  /** A root filesystem folder (made by rootfs.ts) as the whole layer. */
  rootfs?: string;
  files?: readonly LayerFile[];
  trees?: readonly LayerTree[];
  /** [path in the image, target]. */
  links?: readonly [string, string][];
  /** [path in the image, mode]. */
  dirs?: readonly [string, number][];
}

/** The files under `dir` (relative paths, sorted) that `keep` takes. */
export function walk(dir: string, keep: (rel: string) => boolean = () => true, root = dir, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, keep, root, out);
    else if (keep(relative(root, p))) out.push(relative(root, p));
  }
  return out;
}

/** What a file contributes to a layer's hash: its build stamp when it has one, else its bytes. */
function fileHash(path: string): string {
  const s = stampOf(path);
  if (s) return s;
  if (statSync(path).size > 8 * 1024 ** 2) return `${statSync(path).size}:${statSync(path).mtimeMs}`;
  return hashOf(readFileSync(path).toString('base64'));
}

function layerHash(spec: LayerSpec): string {
  const parts: unknown[] = [spec.name, spec.links ?? [], spec.dirs ?? []];
  if (spec.rootfs) parts.push(stampOf(spec.rootfs));
  for (const f of spec.files ?? []) parts.push(f.to, f.mode ?? 0o755, fileHash(f.from));
  for (const t of spec.trees ?? [])
    for (const rel of walk(t.from, t.keep ?? (() => true))) parts.push(t.to, rel, fileHash(join(t.from, rel)));
  return hashOf(...parts);
}

/** Make (or reuse) the layer's tar; resolves with its path. */
export async function ensureLayer(spec: LayerSpec, say: (l: string) => void, signal?: AbortSignal): Promise<string> {
  const out = paths.layer(spec.name);
  const hash = layerHash(spec);
  if (isFresh(out, hash)) return out;
  if (spec.rootfs) {
    await tarLayer(spec.rootfs, out, signal);
  } else {
    const stage = `${out}.d`;
    rmSync(stage, { recursive: true, force: true });
    mkdirSync(stage, { recursive: true });
    for (const [p, mode] of spec.dirs ?? []) {
      mkdirSync(join(stage, p), { recursive: true });
      chmodSync(join(stage, p), mode);
    }
    for (const f of spec.files ?? []) {
      const to = join(stage, f.to);
      mkdirSync(dirname(to), { recursive: true });
      cpSync(f.from, to);
      chmodSync(to, f.mode ?? 0o755);
    }
    for (const t of spec.trees ?? []) {
      for (const rel of walk(t.from, t.keep ?? (() => true))) {
        const to = join(stage, t.to, rel);
        mkdirSync(dirname(to), { recursive: true });
        cpSync(join(t.from, rel), to);
        chmodSync(to, 0o644);
      }
    }
    for (const [p, target] of spec.links ?? []) {
      mkdirSync(dirname(join(stage, p)), { recursive: true });
      if (existsSync(join(stage, p))) rmSync(join(stage, p));
      symlinkSync(target, join(stage, p));
    }
    await tarLayer(stage, out, signal);
    rmSync(stage, { recursive: true, force: true });
  }
  stamp(out, hash);
  say(`layer ${spec.name}: made`);
  return out;
}
