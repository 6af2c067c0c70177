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
function buildLogPath(): string {
  return join(stateDir(), 'build.log');
}

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

/** What a learner is told about a build in progress: `dplab serve` shows it on the terminal and on the page it serves meanwhile. */
export interface BuildStatus {
  state: 'building' | 'done' | 'failed';
  /** Seconds since the build started. */
  seconds: number;
  /** The build's current step in words ("Building the pages' scripts"). */
  step: string;
  /** Pages written so far. */
  pages: number;
  /** When it failed: the message, the fix and the log's last lines. */
  failure?: { message: string; fix?: string; tail?: string };
}

/** Astro's log lines that start a step, and how the step reads to a learner. */
const STEPS: readonly [RegExp, string][] = [
  [/\[content\] Syncing content/, 'Reading the lessons'],
  [/Building static entrypoints/, 'Compiling the pages'],
  [/building client \(vite\)/, "Building the pages' scripts"],
  [/generating static routes/, 'Writing the pages'],
  [/\[@astrojs\/sitemap\]|Pagefind|pagefind/i, 'Indexing the course for search'],
];

/** Follows a build's output: its step and pages written, for BuildStatus. */
export class BuildProgress {
  private readonly started = Date.now();
  private step = 'Starting the build';
  private pages = 0;
  private partial = '';
  private state: BuildStatus['state'] = 'building';
  private failure?: BuildStatus['failure'];

  /** Feed raw output (any chunking). */
  readonly onOutput = (text: string): void => {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    for (const raw of lines) {
      // eslint-disable-next-line no-control-regex
      const line = raw.replace(/\x1b\[[0-9;]*m/g, '');
      const step = STEPS.find(([re]) => re.test(line));
      if (step) this.step = step[1];
      // "  ├─ /lessons/ipvs/index.html (+40ms)" and "  └─ /404.html": one page each.
      if (/^\S*\s+[├└]─ \/\S*\.html/.test(line)) this.pages++;
    }
  };

  done(): void {
    this.state = 'done';
    this.step = 'Done';
  }

  failed(err: unknown): void {
    this.state = 'failed';
    this.failure =
      err instanceof DplabError
        ? { message: err.message, fix: err.fix, tail: err.details }
        : { message: err instanceof Error ? err.message : String(err) };
  }

  get finished(): boolean {
    return this.state === 'done';
  }

  status(): BuildStatus {
    return {
      state: this.state,
      seconds: Math.round((Date.now() - this.started) / 1000),
      step: this.step,
      pages: this.pages,
      ...(this.failure ? { failure: this.failure } : {}),
    };
  }
}

/**
 * Build the site with its output captured into buildLogPath() (and fed to `onOutput` as it
 * comes, for progress). A failure throws with the log's last lines as details and the log's
 * path in the fix.
 */
export async function buildSite(opts: { onOutput?: (text: string) => void } = {}): Promise<{ log: string; durationMs: number }> {
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
      onOutput: opts.onOutput,
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
