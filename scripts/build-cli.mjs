#!/usr/bin/env node
/**
 * Compiles the `dplab` CLI and the runner (scripts/cli.ts and everything it imports) into
 * JavaScript, so `dplab` and `npm start` start at Node's speed instead of compiling TypeScript
 * through tsx on every run. The output is split: cli.mjs, the entry, holds the dispatch and the
 * command catalogue; each command (imported lazily by scripts/commands/index.ts) and the code
 * commands share become chunks beside it, so `dplab help` reads a few kilobytes and `dplab
 * serve` only the server's part. Packages in node_modules stay imports where the list below
 * says so (node-pty is native; the development tools are not needed at run time).
 *
 * One build is one directory, dist-cli/<id>/, never written to again. dist-cli/inputs.json
 * names the current one and lists every source file it was made from: scripts/dplab.mjs reads
 * it to find the entry and compares the sources' times with the build's to know when to
 * compile again. inputs.json is replaced last and atomically (rename), so a concurrent dplab
 * sees either the old build or the new one, whole. Run by `npm install` (prepare) and by
 * dplab.mjs itself when a source changed; plain JavaScript, so it runs before anything is compiled.
 */
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI_OUT_DIR = join(ROOT, 'dist-cli');
/** The entry's file name inside a build's directory. */
export const CLI_ENTRY = 'cli.mjs';
/** A build directory that is no longer current is removed once it is this old (a dplab that read the old inputs.json has long loaded what it needs). */
const STALE_BUILD_MS = 60_000;

/** The directory of the current build (from inputs.json in `outDir`), or undefined. */
function currentBuild(outDir) {
  try {
    return JSON.parse(readFileSync(join(outDir, 'inputs.json'), 'utf8')).build;
  } catch {
    return undefined;
  }
}

/** Compile into `outDir` (dist-cli/; a test names another); returns the entry's path, the number of source files and the time it took. */
export async function buildCli(outDir = CLI_OUT_DIR) {
  const started = Date.now();
  const { build } = await import('esbuild');
  const id = `${started.toString(36)}-${process.pid}`;
  const buildDir = join(outDir, id);
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { cli: 'scripts/cli.ts' },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['@lydell/node-pty', 'tsx', 'tsx/*', 'esbuild', 'playwright-core', 'astro', 'astro/*'],
    metafile: true,
    write: false,
    outdir: buildDir,
    entryNames: '[name]',
    chunkNames: 'chunks/[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    // A map beside each file: `--verbose` stack traces name the TypeScript lines (dplab.mjs
    // turns source maps on then); without it Node never reads the maps.
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
  // A fresh directory nobody reads until inputs.json names it.
  for (const file of result.outputFiles) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.contents);
  }
  const previous = currentBuild(outDir);
  // The inputs last: a build is trusted only with the list it was made from, and the build's
  // start time is what sources are compared with (an edit during the build counts as newer).
  const inputsFile = join(outDir, 'inputs.json');
  const tmp = `${inputsFile}.${id}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ builtAt: started, build: id, entry: CLI_ENTRY, inputs }, null, 1)}\n`);
  renameSync(tmp, inputsFile);
  pruneBuilds(outDir, [id, previous]);
  return { entry: join(buildDir, CLI_ENTRY), files: inputs.length, ms: Date.now() - started };
}

/** Remove the builds that are neither kept nor recent (a recent one may be a concurrent build still writing), and the single-file bundle of older versions. */
function pruneBuilds(outDir, keep) {
  for (const entry of readdirSync(outDir, { withFileTypes: true })) {
    const path = join(outDir, entry.name);
    try {
      if (entry.isDirectory()) {
        if (!keep.includes(entry.name) && Date.now() - statSync(path).mtimeMs > STALE_BUILD_MS)
          rmSync(path, { recursive: true, force: true });
      } else if (entry.name === 'cli.mjs' || entry.name === 'cli.mjs.map') {
        rmSync(path, { force: true });
      }
    } catch {
      // Another build removed it first.
    }
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    const { files, ms } = await buildCli();
    console.log(`dplab compiled: ${files} source files into dist-cli/ in ${ms} ms`);
  } catch (err) {
    // An install must not fail for this: dplab runs the sources through tsx until it compiles.
    console.warn(`dplab could not be compiled (${err instanceof Error ? err.message : String(err)}); it will run through tsx.`);
  }
}
