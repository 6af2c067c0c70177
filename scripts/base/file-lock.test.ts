import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withFileLock } from './file-lock.ts';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const lockIn = () => {
  dir = mkdtempSync(join(tmpdir(), 'dplab-lock-'));
  return join(dir, 'x.lock');
};

describe('withFileLock', () => {
  it('waits for another live process that holds the lock, says who, then runs', async () => {
    const path = lockIn();
    // Another process takes the lock as withFileLock does (O_EXCL, its pid), holds it 1.5 s, then lets go.
    const other = spawn(process.execPath, [
      '-e',
      `const fs=require('fs');fs.writeFileSync(${JSON.stringify(path)},process.pid+'\\n',{flag:'wx'});setTimeout(()=>fs.rmSync(${JSON.stringify(path)}),1500)`,
    ]);
    while (!existsSync(path)) await new Promise((r) => setTimeout(r, 20));
    const waited: number[] = [];
    const started = Date.now();
    const ran = await withFileLock(path, async () => Date.now() - started, { pollMs: 50, onWait: (pid) => waited.push(pid) });
    expect(waited).toEqual([other.pid]);
    expect(ran).toBeGreaterThan(1000);
    expect(existsSync(path)).toBe(false);
  });

  it('takes over a lock whose process is gone', async () => {
    const path = lockIn();
    const gone = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => gone.on('exit', r));
    writeFileSync(path, `${gone.pid}\n`);
    const waited: number[] = [];
    expect(await withFileLock(path, async () => readFileSync(path, 'utf8').trim(), { onWait: (p) => waited.push(p) })).toBe(
      String(process.pid),
    );
    expect(waited).toEqual([]);
  });

  it('runs two holders in one process one after the other, also when the first fails', async () => {
    const path = lockIn();
    const seen: string[] = [];
    const one = withFileLock(
      path,
      async () => {
        seen.push('a in');
        await new Promise((r) => setTimeout(r, 200));
        seen.push('a out');
        throw new Error('a failed');
      },
      { pollMs: 20 },
    );
    const two = withFileLock(
      path,
      async () => {
        seen.push('b in');
        seen.push('b out');
      },
      { pollMs: 20 },
    );
    await expect(one).rejects.toThrow('a failed');
    await two;
    expect(seen).toEqual(['a in', 'a out', 'b in', 'b out']);
    expect(existsSync(path)).toBe(false);
  });

  it('stops waiting when aborted and leaves the holder its lock', async () => {
    const path = lockIn();
    let release = () => {};
    const holding = withFileLock(path, () => new Promise<void>((r) => (release = r)), { pollMs: 20 });
    const ac = new AbortController();
    const waiting = withFileLock(path, async () => 'ran', { pollMs: 20, signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    await expect(waiting).rejects.toThrow();
    expect(readFileSync(path, 'utf8').trim()).toBe(String(process.pid));
    release();
    await holding;
  });
});
