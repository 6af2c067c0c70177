import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:sim`: the simulated-node tier. Builds (or reuses) the real Kubernetes components,
 * then runs real clusters of network-namespace nodes (iptables and nftables) and the kubelet
 * stand-in's tests against the real API server. Linux + root; never part of `npm test`.
 * Files: test/sim/**\/*.test.ts and scripts/**\/*.sim.test.ts.
 */
export default defineConfig({
  test: {
    include: ['test/sim/**/*.test.ts', 'scripts/**/*.sim.test.ts'],
    globalSetup: ['test/sim/global-setup.ts'],
    // A cold build of the components takes long; each cluster starts in a minute or two.
    testTimeout: 20 * 60_000,
    hookTimeout: 90 * 60_000,
    pool: 'forks',
    // Clusters share the host's bridge names and CPU: one file at a time.
    fileParallelism: false,
    // Its own state folder: the tier's kubeconfigs never replace a cluster the user runs.
    env: { DPLAB_SHELL_NORC: '1', DPLAB_STATE_DIR: process.env.DPLAB_STATE_DIR ?? join(tmpdir(), 'dplab-test-sim') },
  },
});
