import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { AUDIT_FILES } from './test/tiers.ts';

/**
 * `npm test`: unit, runner-with-test-doubles, lab replay, real-kernel and browser tiers.
 * The live tier (real kind clusters) has its own config: `npm run test:live`; the simulated-node
 * tier (real components on network-namespace nodes) too: `npm run test:sim`; and the real-kind tier
 * (the test environment's Docker engine and node images): `npm run test:kind`; and the IPVS tier
 * (kind in the test environment's QEMU guest, whose kernel has ip_vs): `npm run test:ipvs`. The
 * whole-course audits (every page, size, theme and font set) are `npm run test:audit`
 * (vitest.audit.config.ts, the list in test/tiers.ts).
 */
export default defineConfig({
  test: {
    include: ['scripts/**/*.test.ts', 'labs/**/*.test.ts', 'site/**/*.test.ts', 'test/**/*.test.ts', 'e2e/**/*.test.ts'],
    exclude: [
      'test/live/**',
      'test/sim/**',
      '**/*.sim.test.ts',
      '**/*.kind.test.ts',
      '**/*.ipvs.test.ts',
      'node_modules/**',
      'dist/**',
      ...AUDIT_FILES,
    ],
    // Builds the site once when it is missing or stale, for the browser tier.
    globalSetup: ['e2e/global-setup.ts'],
    // Each file's temporary folders live in one folder, removed when the file ends.
    setupFiles: ['test/temp-dir-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Two files at once even on two cores (vitest's default there is one): most files spend their
    // time waiting on a browser, a shell or a test double, which the other file's work fills.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Test shells skip the user's ~/.bashrc: a slow one (pyenv, nvm) would stall them.
    env: { DPLAB_SHELL_NORC: '1' },
  },
});
