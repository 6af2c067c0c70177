import { defineConfig } from 'vitest/config';

/** `npm run test:live`: real kind clusters in every mode. Needs Docker; never part of `npm test`. */
export default defineConfig({
  test: {
    include: ['test/live/**/*.test.ts'],
    // Creating a cluster pulls a node image the first time; Cilium adds its images.
    testTimeout: 25 * 60_000,
    hookTimeout: 10 * 60_000,
    pool: 'forks',
    // One cluster at a time: memory, and kind's own locking.
    fileParallelism: false,
  },
});
