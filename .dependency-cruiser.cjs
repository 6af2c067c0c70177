/**
 * The dependency rule (`npm run deps`, also run by CI and `npm test`): layers import one way,
 * nothing imports in a circle, production code imports no test code, and the browser imports
 * only the shared wire types from the runner's side. ARCHITECTURE.md explains the layers.
 *
 * Each layer is a folder named for it (the cli layer: the entry points at the top of scripts/),
 * and every shipped module under scripts/ is in exactly one. A layer may import its own folder
 * and every layer listed before it, never one after it. Tests (`*.test.ts`, e2e/, test/) sit on
 * top of everything and may import anything; nothing else imports them.
 */

/** Lowest first. Paths are regular expressions on the path from the project root; no two overlap. */
const LAYERS = [
  // The shapes that cross HTTP, the event stream and the terminal socket: zod and nothing else.
  { name: 'wire', path: '^scripts/wire/' },
  // The command seam, the error shape, the project's paths, the site build, the pinned versions.
  { name: 'base', path: '^scripts/base/' },
  // What exists (modes, cluster providers, the syllabus): data the whole runner reads.
  { name: 'catalogue', path: '^scripts/catalogue/' },
  { name: 'preflight', path: '^scripts/preflight/' },
  // The simulated cluster's parts (control plane, nodes); clusters/sim-provider.ts drives them.
  { name: 'sim', path: '^scripts/sim/' },
  { name: 'clusters', path: '^scripts/clusters/' },
  { name: 'terminals', path: '^scripts/terminals/' },
  { name: 'dataplane', path: '^scripts/dataplane/' },
  { name: 'labs', path: '^scripts/labs/|^labs/' },
  { name: 'services', path: '^scripts/services/' },
  // The workshop portal forwards to seat runners and reuses the server's security pieces.
  { name: 'server/portal/commands', path: '^scripts/(server|portal|commands)/' },
  // The entry points: every file directly in scripts/ (cli.ts, dplab.mjs, build-cli.mjs, astro-integration.ts).
  { name: 'cli', path: '^scripts/[^/]+$' },
];

const TESTS = '(^e2e/|^test/|\\.test\\.ts$)';

// The top layer (cli) has nothing above it to forbid.
const layerRules = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${layer.name}`,
  comment: `${layer.name} may import only itself and the layers below it (${
    LAYERS.slice(0, i)
      .map((l) => l.name)
      .join(', ') || 'none'
  }).`,
  severity: 'error',
  from: { path: layer.path, pathNot: TESTS },
  to: {
    path: LAYERS.slice(i + 1)
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
      // Type-only imports count too: a cycle of types is still two modules that need each other.
      to: { circular: true },
    },
    {
      name: 'portal-imports-no-lab',
      comment:
        'The portal forwards to seat runners and shares only the server core (scripts/server/core/) and the gate pieces with them: nothing it loads, however indirectly, is a lab or the lab engine (issue 38).',
      severity: 'error',
      from: { path: '^scripts/portal/', pathNot: TESTS },
      to: { path: '^(scripts/labs|labs)/', reachable: true },
    },
    {
      name: 'server-core-stands-alone',
      comment:
        'The server core (router, SSE, upgrade refusal, connection cap, HTTP server) is what the runner and the portal share: it imports neither of them, and no service, lab or cluster (only base and wire).',
      severity: 'error',
      from: { path: '^scripts/server/core/', pathNot: TESTS },
      to: { path: '^scripts/', pathNot: '^scripts/(server/core|base|wire)/' },
    },
    {
      name: 'in-a-layer',
      comment:
        'Every shipped module under scripts/ is in a layer (LAYERS above, the table in ARCHITECTURE.md): a new folder gets a row in both.',
      severity: 'error',
      from: { path: '^scripts/', pathNot: [TESTS, ...LAYERS.map((l) => l.path)].join('|') },
      to: {},
    },
    {
      name: 'no-test-code-in-production',
      comment:
        'Test doubles, fixtures, harnesses and the benchmarks (test/bench/) stay in test folders; shipped code (scripts/, site/, labs/) never imports them.',
      severity: 'error',
      from: { pathNot: TESTS },
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
