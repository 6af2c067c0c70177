/**
 * Where things live. The project root is found by walking up to our package.json, so the
 * same code works from scripts/ under tsx and from bundled chunks under dist/ at build time.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'dataplane-lab';

function findRoot(start: string): string {
  let dir = start;
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if (JSON.parse(readFileSync(pkg, 'utf8')).name === PACKAGE_NAME) return dir;
      } catch {
        // not ours; keep walking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}

export const projectRoot = findRoot(dirname(fileURLToPath(import.meta.url)));
/** The built site; `DPLAB_DIST` moves it (as astro.config.mjs does), so parallel builds do not collide. */
export const distDir = resolve(projectRoot, process.env.DPLAB_DIST ?? 'dist');
export const labsDir = join(projectRoot, 'labs');
export const kindConfigDir = join(projectRoot, 'kind-configs');

/** Runner state (kubeconfigs, progress, workspace). `DPLAB_STATE_DIR` moves it, e.g. in tests. */
export function stateDir(): string {
  return resolve(process.env.DPLAB_STATE_DIR ?? join(projectRoot, '.dplab'));
}

/** The folder a terminal's shell starts in. */
export function workspaceDir(): string {
  return join(stateDir(), 'workspace');
}
