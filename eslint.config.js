// Lint: typescript-eslint's recommended rules over the runner, the labs, the browser code and
// the tests. Type-aware rules are left out: `npm run typecheck` already runs the compiler.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'dist-cli/**', 'node_modules/**', '.astro/**', '.dplab/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'off',
      'prefer-const': 'error',
      // `any` is allowed only in tests (fixtures poked into odd shapes); production code reads typed data.
      '@typescript-eslint/no-explicit-any': 'error',
      // Module-level "last focused element" bookkeeping assigns `this`; that is not aliasing.
      '@typescript-eslint/no-this-alias': 'off',
    },
  },
  {
    files: ['**/*.test.ts', 'e2e/**', 'test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Node scripts and configs written in plain JavaScript.
    files: ['**/*.mjs', '**/*.cjs', '**/*.js'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly', setTimeout: 'readonly' },
    },
  },
  {
    // Served as-is to the browser (site/public): browser globals.
    files: ['site/public/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        location: 'readonly',
        history: 'readonly',
        localStorage: 'readonly',
        sessionStorage: 'readonly',
        addEventListener: 'readonly',
      },
    },
  },
  {
    // The workshop portal's own pages (scripts/portal/pages), served as-is to the browser.
    files: ['scripts/portal/pages/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: Object.fromEntries(
        [
          'document',
          'location',
          'history',
          'localStorage',
          'sessionStorage',
          'fetch',
          'URLSearchParams',
          'WebSocket',
          'TextDecoder',
          'TextDecoderStream',
          'confirm',
          'setInterval',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
);
