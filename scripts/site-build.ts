/**
 * `npm start` builds the course when the build is missing or older than its sources, so a
 * fresh clone needs nothing but `npm install` and `npm start`.
 */
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { distDir, projectRoot, stateDir } from './paths.ts';
import { CommandError, run, TIMEOUTS } from './exec.ts';
import { DplabError } from './errors.ts';

/** Lines of the build log shown when a build fails (the whole log is in the file). */
const FAIL_TAIL_LINES = 25;

/** Where the last build's full output goes: Astro prints ~140 lines nobody needs on success. */
export function buildLogPath(): string {
  return join(stateDir(), 'build.log');
}

const STAMP = join(distDir, '.dplab-build');
/** What the site is made from (pages import lab data and runner modules): a change in any of these means the build is stale. */
const SOURCES = ['site', 'labs', 'scripts', 'astro.config.mjs', 'package.json', 'package-lock.json'];
// scripts/bench: benchmarks drive the built site; no page imports them.
const SKIP = new Set(['node_modules', '.astro', 'observations', 'bench']);

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

/**
 * Build the site with its output captured into buildLogPath(). A failure throws with the log's
 * last lines as details and the log's path in the fix.
 */
export async function buildSite(): Promise<{ log: string; durationMs: number }> {
  const astroBin = join(projectRoot, 'node_modules', 'astro', 'astro.js');
  const log = buildLogPath();
  mkdirSync(dirname(log), { recursive: true });
  try {
    // A production build whoever calls: under vitest NODE_ENV is "test" and DEV/PROD/MODE are
    // set, which Astro's import.meta.env takes over, and Starlight then leaves the site search
    // out of the pages (the browser tier would test another site). Undefined drops a variable.
    const r = await run(process.execPath, [astroBin, 'build'], {
      cwd: projectRoot,
      timeoutMs: TIMEOUTS.provision,
      env: { NODE_ENV: 'production', DEV: undefined, PROD: undefined, MODE: undefined },
    });
    writeFileSync(log, `${r.stdout}${r.stderr}`);
    writeFileSync(STAMP, `${new Date().toISOString()}\n`);
    return { log, durationMs: r.durationMs };
  } catch (err) {
    const text = err instanceof CommandError ? `${err.stdout}${err.stderr}` : String(err);
    writeFileSync(log, text);
    const tail = text.trimEnd().split('\n').slice(-FAIL_TAIL_LINES).join('\n');
    throw new DplabError(`Building the course failed${err instanceof CommandError ? ` (exit code ${err.exitCode})` : ''}.`, {
      fix: `Read the full log in ${log}. After a change of dependencies run \`npm install\` again, then retry.`,
      details: tail,
      cause: err,
    });
  }
}
