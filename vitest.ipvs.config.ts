import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:ipvs`: the IPVS tier. This host's kernel has no ip_vs, so its global setup
 * builds (or reuses) the kind test environment and its QEMU guest, whose Debian kernel has
 * ip_vs, and makes the guest ready for the sim provider; then the product's own CLI brings up
 * an IPVS cluster there (`dplab up ipvs` with the sim provider: real control plane, kube-proxy
 * in IPVS mode and CoreDNS on network-namespace nodes), its dataplane is read, and every IPVS
 * lab's contract runs on it. kind itself in the guest never settled under software emulation
 * (test/kind/guest-sim.ts says why). Linux + root, and slow: hours, so `.ci/run` does not run it.
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
