/**
 * A file written whole or not at all: a temp file beside it, flushed to disk, then renamed over
 * it, so a crash (or `kill -9`) mid-write leaves the old file or the new one, never half of one.
 * `mode` is set at creation, so a secret is never readable by others, not even for a moment.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export function writeFileAtomic(file: string, text: string, opts: { mode?: number; dirMode?: number } = {}): void {
  mkdirSync(dirname(file), { recursive: true, ...(opts.dirMode !== undefined ? { mode: opts.dirMode } : {}) });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  const fd = openSync(tmp, 'wx', opts.mode ?? 0o644);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, file);
}
