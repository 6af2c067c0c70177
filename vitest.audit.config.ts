import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';
import { AUDIT_FILES } from './test/tiers.ts';

/**
 * `npm run test:audit`: the whole-course audits (test/tiers.ts), with `npm test`'s set-up: the
 * course built once when stale, Chromium from Debian, two files at once.
 */
export default defineConfig({
  test: { ...base.test, include: AUDIT_FILES, exclude: ['node_modules/**', 'dist/**'] },
});
