import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:ipvs`: the IPVS tier. This host's kernel has no ip_vs, so its global setup
 * builds (or reuses) the kind test environment and its QEMU guest, whose Debian kernel has
 * ip_vs, and points the product at the guest's Docker; then a real three-node kind cluster in
 * IPVS mode comes up through the product's own kind provider, its dataplane is read, and every
 * IPVS lab's contract runs on it. Linux + root; software emulation makes it slow (see README).
 * Files: test/kind/**\/*.ipvs.test.ts.
 */
export default defineConfig({
  test: {
    include: ['test/kind/**/*.ipvs.test.ts'],
    globalSetup: ['test/kind/ipvs-global-setup.ts'],
    testTimeout: 120 * 60_000,
    hookTimeout: 90 * 60_000,
    pool: 'forks',
    fileParallelism: false,
    env: { DPLAB_SHELL_NORC: '1', DPLAB_STATE_DIR: process.env.DPLAB_STATE_DIR ?? join(tmpdir(), 'dplab-test-ipvs') },
  },
});
