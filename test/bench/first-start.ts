/**
 * The first `npm start` on a fresh clone, as a learner meets it: `git clone` of this checkout's
 * commit into a temporary folder, `npm ci`, then `npm start` timed until the link is printed,
 * until the link's page answers (the build page while the course builds), and until the
 * course itself is served. `npx tsx test/bench/first-start.ts` (several minutes: it installs
 * every package). Figures only; the temporary folder is removed at the end.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { projectRoot } from '../../scripts/base/paths.ts';
import { report } from './lib/report.ts';

const GIVE_UP_MS = 15 * 60_000;

function must(file: string, args: string[], cwd: string): void {
  const r = spawnSync(file, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} failed (exit ${r.status})`);
}

async function answers(url: string, want: (status: number, body: string) => boolean): Promise<boolean> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return want(r.status, await r.text());
  } catch {
    return false;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'dplab-first-start-'));
const clone = join(dir, 'clone');
const commit = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: projectRoot, encoding: 'utf8' }).stdout.trim();
try {
  must('git', ['clone', '--quiet', '--no-checkout', projectRoot, clone], dir);
  must('git', ['checkout', '--quiet', commit], clone);
  const ciStarted = performance.now();
  must('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], clone);
  const ciMs = performance.now() - ciStarted;

  // Port 0: a free one, so a course already running on 4321 does not get in the way.
  const started = performance.now();
  const child = spawn('npm', ['start', '--', '--port', '0'], {
    cwd: clone,
    env: { ...process.env, DPLAB_TOKEN: '' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let linkMs = 0;
  let link = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
    const m = /Dataplane Lab: (http:\/\/\S+)/.exec(out);
    if (m && !link) {
      link = m[1];
      linkMs = performance.now() - started;
    }
  });
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  let pageMs = 0;
  let courseMs = 0;
  try {
    while (!courseMs) {
      if (performance.now() - started > GIVE_UP_MS || child.exitCode !== null)
        throw new Error(`npm start did not serve the course:\n${out}`);
      if (link) {
        const page = new URL('/', link).href;
        if (!pageMs && (await answers(page, (_s, body) => /Building the course|Dataplane Lab/.test(body))))
          pageMs = performance.now() - started;
        if (await answers(page, (s) => s === 200)) courseMs = performance.now() - started;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    // The whole group npm started (npm, dplab, the build): ours, by its id.
    if (child.pid) process.kill(-child.pid, 'SIGTERM');
  }
  const lines = out.trim().split('\n').length;
  console.log(out);
  report('first-start', [
    {
      measure: 'first `npm start` on a fresh clone → link printed',
      unit: 's',
      ours: linkMs / 1000,
      goal: { text: 'a usable page ≤ 15 s', met: pageMs > 0 && pageMs <= 15_000 },
    },
    {
      measure: '… → the link’s page answers (build progress)',
      unit: 's',
      ours: pageMs / 1000,
      goal: { text: '≤ 15 s', met: pageMs <= 15_000 },
    },
    { measure: `… → the course is served (the first build; ${lines} lines printed)`, unit: 's', ours: courseMs / 1000 },
    { measure: '`npm ci` on the fresh clone (includes compiling dplab)', unit: 's', ours: ciMs / 1000 },
  ]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
