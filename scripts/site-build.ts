/**
 * `npm start` builds the course when the build is missing or older than its sources, so a
 * fresh clone needs nothing but `npm install` and `npm start`.
 */
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { distDir, projectRoot } from './paths.ts';
import { run, TIMEOUTS } from './exec.ts';

const STAMP = join(distDir, '.dplab-build');
/** What the site is made from (pages import lab data and runner modules): a change in any of these means the build is stale. */
const SOURCES = ['site', 'labs', 'scripts', 'astro.config.mjs', 'package.json', 'package-lock.json'];
const SKIP = new Set(['node_modules', '.astro', 'observations']);

function newestMtime(path: string): number {
  let st;
  try {
    st = statSync(path);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(path)) {
    if (SKIP.has(entry) || entry.endsWith('.test.ts')) continue;
    newest = Math.max(newest, newestMtime(join(path, entry)));
  }
  return newest;
}

export function buildIsStale(): { stale: boolean; reason: string } {
  if (!existsSync(join(distDir, 'index.html')) || !existsSync(STAMP)) return { stale: true, reason: 'no build yet' };
  const built = statSync(STAMP).mtimeMs;
  const changed = SOURCES.find((s) => newestMtime(join(projectRoot, s)) > built);
  return changed ? { stale: true, reason: `${changed} changed since the last build` } : { stale: false, reason: 'up to date' };
}

export async function buildSite(): Promise<void> {
  const astroBin = join(projectRoot, 'node_modules', 'astro', 'astro.js');
  // A production build whoever calls: under vitest NODE_ENV is "test", and Starlight then
  // leaves the site search out of the pages (the browser tier would test another site).
  await run(process.execPath, [astroBin, 'build'], { cwd: projectRoot, timeoutMs: TIMEOUTS.provision, inheritOutput: true, env: { NODE_ENV: 'production' } });
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
}
