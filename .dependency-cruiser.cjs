/**
 * The dependency rule (`npm run deps`, also run by CI and `npm test`): layers import one way,
 * nothing imports in a circle, production code imports no test code, and the browser imports
 * only the shared wire types from the runner's side. ARCHITECTURE.md explains the layers.
 *
 * A layer may import its own folder and every layer listed before it, never one after it.
 * Tests (`*.test.ts`, e2e/, test/) sit on top of everything and may import anything.
 */

/** Lowest first. Paths are regular expressions on the path from the project root. */
const LAYERS = [
  // base: the command seam, the error shape, the project's paths, the wire types, the site build.
  // versions.ts is pure data (no imports), so the command seam can name the kind it wants.
  { name: 'base', path: '^scripts/(exec|errors|paths|site-build)\\.ts$|^scripts/wire/|^scripts/clusters/versions\\.ts$' },
  // The mode catalogue (which modes exist) is data the whole runner reads: preflight checks
  // tools against it, clusters provision from it.
  { name: 'catalogue', path: '^scripts/clusters/modes\\.ts$|^scripts/course/' },
  { name: 'preflight', path: '^scripts/preflight/' },
  { name: 'clusters', path: '^scripts/clusters/' },
  { name: 'terminals', path: '^scripts/terminals/' },
  { name: 'dataplane', path: '^scripts/dataplane/' },
  { name: 'labs', path: '^scripts/labs/|^labs/' },
  { name: 'services', path: '^scripts/runner/' },
  // The workshop portal forwards to seat runners and reuses the server's security pieces.
  { name: 'server/portal/commands', path: '^scripts/(server|portal|commands|bench)/' },
  { name: 'cli', path: '^scripts/(cli\\.ts|dplab\\.mjs|astro-integration\\.ts)$' },
];

const TESTS = '(^e2e/|^test/|\\.test\\.ts$)';

/** Everything matched by an earlier layer is not this one (clusters/modes.ts is catalogue, not clusters). */
function own(i) {
  const earlier = LAYERS.slice(0, i).map((l) => l.path);
  return { path: LAYERS[i].path, pathNot: [TESTS, ...earlier].join('|') };
}

const layerRules = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${layer.name}`,
  comment: `${layer.name} may import only itself and the layers below it (${
    LAYERS.slice(0, i)
      .map((l) => l.name)
      .join(', ') || 'none'
  }).`,
  severity: 'error',
  from: own(i),
  to: {
    path: LAYERS.slice(i + 1)
      .map((l) => l.path)
      .join('|'),
    pathNot: LAYERS.slice(0, i + 1)
      .map((l) => l.path)
      .join('|'),
  },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-circular',
      comment: 'A cycle means two modules are one concept, or one of them sits in the wrong layer.',
      severity: 'error',
      from: {},
      // Type-only imports vanish at run time; a cycle through them alone is no layering fault.
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'no-test-code-in-production',
      comment: 'Test doubles, fixtures and harnesses stay in test folders; production code never imports them.',
      severity: 'error',
      // Benchmarks drive the runner the way the tests do (a terminal client, a runner child).
      from: { pathNot: `${TESTS}|^scripts/bench/` },
      to: { path: TESTS },
    },
    {
      name: 'no-dev-deps-in-production',
      comment: 'What `npm start` runs must come from "dependencies" (an install without dev dependencies must work).',
      severity: 'error',
      from: { path: '^(scripts|labs|site)/', pathNot: TESTS },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'browser-imports-only-wire',
      comment: 'site/client runs in the browser: from the runner it may import only the shared wire types (scripts/wire/).',
      severity: 'error',
      from: { path: '^site/client/', pathNot: TESTS },
      to: { path: '^(scripts|labs)/', pathNot: '^scripts/wire/' },
    },
    {
      name: 'browser-no-node-builtins',
      comment: 'site/client and the wire types run in the browser: no node: modules.',
      severity: 'error',
      from: { path: '^site/client/|^scripts/wire/', pathNot: TESTS },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'wire-imports-only-zod',
      comment: 'The wire types are the contract both sides compile against: they import zod and each other, nothing else.',
      severity: 'error',
      from: { path: '^scripts/wire/', pathNot: TESTS },
      to: { pathNot: '^scripts/wire/|^node_modules/zod/' },
    },
    {
      name: 'zod-4-through-wire-zod',
      comment: "zod 4 mini comes from scripts/wire/zod.ts, which makes it jitless before any schema exists (the pages' CSP refuses eval).",
      severity: 'error',
      from: { pathNot: '^scripts/wire/zod\\.ts$' },
      to: { path: '^node_modules/zod/v4' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|\\.astro|\\.dplab)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
