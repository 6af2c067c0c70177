#!/usr/bin/env node
/**
 * Compiles the `dplab` CLI and the runner (scripts/cli.ts and everything it imports) into one
 * JavaScript file, dist-cli/cli.mjs, so `dplab` and `npm start` start at Node's speed instead of
 * compiling TypeScript through tsx on every run. Packages in node_modules stay imports (node-pty
 * is native; the others load as they are). Next to it, dist-cli/inputs.json lists every source
 * file the bundle was made from: scripts/dplab.mjs compares their times with the build's to
 * know, cheaply, when to compile again. Run by `npm install` (prepare) and by dplab.mjs itself
 * when a source changed; plain JavaScript, so it runs before anything is compiled.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI_OUT_DIR = join(ROOT, 'dist-cli');
export const CLI_BUNDLE = join(CLI_OUT_DIR, 'cli.mjs');
export const CLI_INPUTS = join(CLI_OUT_DIR, 'inputs.json');

/** Compile; returns the number of source files and the time it took. Writes are atomic (rename), so a concurrent dplab never reads half a file. */
export async function buildCli() {
  const started = Date.now();
  const { build } = await import('esbuild');
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ['scripts/cli.ts'],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['@lydell/node-pty', 'tsx', 'tsx/*', 'esbuild', 'playwright-core', 'astro', 'astro/*'],
    metafile: true,
    write: false,
    outfile: CLI_BUNDLE,
    // A map beside the bundle: `--verbose` stack traces name the TypeScript lines (dplab.mjs
    // turns source maps on then); without it Node never reads the map.
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'silent',
    legalComments: 'none',
    // Less to parse at every start; names stay (error classes and stack traces read them).
    minifyWhitespace: true,
    minifySyntax: true,
    // CommonJS packages (ws) require Node's modules; an ES module has no `require` of its own.
    banner: { js: "import { createRequire as __dplabRequire } from 'node:module'; const require = __dplabRequire(import.meta.url);" },
  });
  // Our sources; a change of packages shows as a newer package-lock.json (npm writes it on every install).
  const inputs = [
    ...Object.keys(result.metafile.inputs).filter((f) => !f.startsWith('node_modules/')),
    'package-lock.json',
    'scripts/build-cli.mjs',
  ].sort();
  mkdirSync(CLI_OUT_DIR, { recursive: true });
  const tmp = `.${process.pid}.${Date.now()}.tmp`;
  // The map first, the bundle after it.
  for (const file of [...result.outputFiles].sort((a, b) => Number(a.path === CLI_BUNDLE) - Number(b.path === CLI_BUNDLE))) {
    writeFileSync(file.path + tmp, file.contents);
    renameSync(file.path + tmp, file.path);
  }
  // The inputs last: a bundle is trusted only with the list it was made from, and the build's
  // start time is what sources are compared with (an edit during the build counts as newer).
  writeFileSync(CLI_INPUTS + tmp, `${JSON.stringify({ builtAt: started, inputs }, null, 1)}\n`);
  renameSync(CLI_INPUTS + tmp, CLI_INPUTS);
  return { files: inputs.length, ms: Date.now() - started };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    const { files, ms } = await buildCli();
    console.log(`dplab compiled: ${files} source files into dist-cli/cli.mjs in ${ms} ms`);
  } catch (err) {
    // An install must not fail for this: dplab runs the sources through tsx until it compiles.
    console.warn(`dplab could not be compiled (${err instanceof Error ? err.message : String(err)}); it will run through tsx.`);
  }
}
