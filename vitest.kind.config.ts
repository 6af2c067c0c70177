import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:kind`: the real-kind tier. Its global setup builds (or reuses) the kind test
 * environment (test/kind/: a Docker engine of its own, node images built here) and points the
 * product at it; then real three-node kind clusters come up through the product's own kind
 * provider, every lab's contract runs on each, and a browser journey runs on one. Linux + root;
 * never part of `npm test`. Files: test/kind/**\/*.kind.test.ts.
 */
export default defineConfig({
  test: {
    include: ['test/kind/**/*.kind.test.ts'],
    globalSetup: ['test/kind/global-setup.ts'],
    testTimeout: 40 * 60_000,
    hookTimeout: 90 * 60_000,
    pool: 'forks',
    // One cluster at a time: two cores, and kind's own locking.
    fileParallelism: false,
    // Its own state folder: the tier's kubeconfigs never replace a cluster the user runs.
    env: { DPLAB_SHELL_NORC: '1', DPLAB_STATE_DIR: process.env.DPLAB_STATE_DIR ?? join(tmpdir(), 'dplab-test-kind') },
  },
});
