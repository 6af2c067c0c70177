/**
 * The `dplab` entry point stops the server it runs however it is asked to: SIGTERM, SIGHUP (a
 * closed terminal), and, under `npm start`, npm killed (the `sh -c` npm runs it in dies without
 * passing the signal on).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { distDir, projectRoot } from './base/paths.ts';

const DPLAB = join(projectRoot, 'scripts', 'dplab.mjs');
const started: number[] = [];

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DPLAB_TOKEN: `sig-${randomBytes(16).toString('hex')}`,
    DPLAB_STATE_DIR: mkdtempSync(join(tmpdir(), 'dplab-sig-state-')),
    DPLAB_SHELL_NORC: '1',
    npm_lifecycle_event: '',
    ...extra,
  };
}

/** Resolves with the port once the runner printed its link. */
function portOf(child: ChildProcess): Promise<number> {
  let log = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`runner did not start: ${log}`)), 60_000);
    const read = (d: Buffer) => {
      log += d;
      const m = /Dataplane Lab: http:\/\/127\.0\.0\.1:(\d+)\//.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.on('exit', () => reject(new Error(`runner exited: ${log}`)));
  });
}

async function serving(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5_000) });
    return true;
  } catch {
    return false;
  }
}

const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/\) Z /.test(spawnSync('cat', [`/proc/${pid}/stat`]).stdout.toString());

afterEach(() => {
  for (const pid of started.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

describe.skipIf(!existsSync(join(distDir, 'index.html')))('dplab serve stops when asked', { timeout: 90_000 }, () => {
  for (const signal of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) {
    it(`on ${signal}: it closes the server and exits`, async () => {
      const child = spawn(process.execPath, [DPLAB, 'serve', '--port', '0'], {
        cwd: projectRoot,
        env: env(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      started.push(child.pid!);
      const port = await portOf(child);
      expect(await serving(port)).toBe(true);
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.kill(signal);
      expect(await exited).toBe(0);
      expect(await serving(port)).toBe(false);
    });
  }

  it('under npm, when npm and its shell are killed', async () => {
    // As npm runs a script: `sh -c '<script>'`, here kept from exec-ing node by a second command.
    const sh = spawn('sh', ['-c', `"${process.execPath}" "${DPLAB}" serve --port 0; true`], {
      cwd: projectRoot,
      env: env({ npm_lifecycle_event: 'start' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(sh.pid!);
    const port = await portOf(sh);
    const node = Number(
      spawnSync('ps', ['-o', 'pid=', '--ppid', String(sh.pid)])
        .stdout.toString()
        .trim(),
    );
    expect(node).toBeGreaterThan(0);
    started.push(node);
    sh.kill('SIGTERM');
    await expect.poll(() => alive(node), { timeout: 30_000, interval: 200 }).toBe(false);
    expect(await serving(port)).toBe(false);
  });
});
