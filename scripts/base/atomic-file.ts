/**
 * Files written whole or not at all: a temp file beside the target, then renamed over it, so a
 * reader (or a crash, a `kill -9`) sees the old file or the new one, never half of one. The
 * mode is set at creation, so a secret is never readable by others, not even for a moment.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

function writeWhole(file: string, text: string, opts: { mode?: number; dirMode?: number; sync: boolean }): void {
  mkdirSync(dirname(file), { recursive: true, ...(opts.dirMode !== undefined ? { mode: opts.dirMode } : {}) });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  const fd = openSync(tmp, 'wx', opts.mode ?? 0o644);
  try {
    writeSync(fd, text);
    if (opts.sync) fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, file);
}

/** Whole, and on disk before it replaces the old file (state that must survive a crash). */
export function writeFileAtomic(file: string, text: string, opts: { mode?: number; dirMode?: number } = {}): void {
  writeWhole(file, text, { ...opts, sync: true });
}

/**
 * Whole, and only when the file says something else. For files other processes read while we
 * may write them again: a shell that starts while its rc file is rewritten read it truncated
 * and never drew its prompt.
 */
export function writeFileIfChanged(file: string, text: string, opts: { mode?: number } = {}): void {
  try {
    if (readFileSync(file, 'utf8') === text) return;
  } catch {
    // not there yet
  }
  writeWhole(file, text, { ...opts, sync: false });
}
