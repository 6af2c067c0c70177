/**
 * Per test file: one temporary folder that holds every temporary folder the file (and what it
 * starts) makes through os.tmpdir(), removed when the file ends. Test files then need no clean-up
 * of their own, and `npm test` leaves nothing behind in /tmp (it used to leave about 80 folders a
 * run: state folders, fake sites, pastes).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'dplab-test-'));
// Open to cross, as /tmp is: the portal's seat users must reach folders the tests make inside it.
chmodSync(dir, 0o755);
process.env.TMPDIR = dir;

// Registered before the file's own hooks, so it runs after them (vitest runs after-hooks as a stack).
afterAll(() => {
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});
