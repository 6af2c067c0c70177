#!/usr/bin/env node
// Entry point of the `dplab` CLI. It runs the compiled CLI (dist-cli/<build>/cli.mjs, made by
// scripts/build-cli.mjs at `npm install`) when no source it was made from changed since, and
// compiles it again first when one did (a second or two). Only when compiling is not
// possible, or DPLAB_TSX=1 asks for it (developing the CLI), do the TypeScript sources run
// through tsx, which costs a few hundred milliseconds at every start.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// node:fs as Node's own module object: an ES `import` of it would build its ES facade, which
// reads every export, fs.promises and the stream classes included (a few ms at each start).
const { readFileSync, statSync } = process.getBuiltinModule('node:fs');

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The current build's entry when dist-cli/inputs.json exists and every file it lists is older than the build; else undefined. */
function freshEntry() {
  try {
    const { builtAt, build, entry, inputs } = JSON.parse(readFileSync(join(root, 'dist-cli', 'inputs.json'), 'utf8'));
    if (typeof build !== 'string' || typeof entry !== 'string') return undefined;
    // `${root}/${file}`, not join(): the listed paths are already normal, and path.join's
    // normalising of ~200 paths costs more than stat-ing them (≈10 ms against ≈2 ms).
    for (const file of inputs) if (statSync(`${root}/${file}`).mtimeMs > builtAt) return undefined;
    const path = `${root}/dist-cli/${build}/${entry}`;
    statSync(path); // a build directory removed by hand: compile again rather than fail to import
    return path;
  } catch {
    return undefined;
  }
}

async function loadMain() {
  // Stack traces (--verbose) in TypeScript lines: Node reads the build's .map files only when asked.
  if (process.argv.includes('--verbose')) process.setSourceMapsEnabled(true);
  if (process.env.DPLAB_TSX !== '1') {
    let entry = freshEntry();
    if (!entry) {
      try {
        // The build just made (even when a source changed again while it ran).
        entry = (await (await import('./build-cli.mjs')).buildCli()).entry;
      } catch (err) {
        process.stderr.write(
          `Note: could not compile dplab (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); running the sources through tsx.\n`,
        );
      }
    }
    if (entry) return (await import(pathToFileURL(entry).href)).main;
  }
  const { register } = await import('tsx/esm/api');
  register();
  return (await import('./cli.ts')).main;
}

/**
 * `npm start` runs this under `sh -c`, and killing npm (`kill <npm's pid>`) ends npm and that
 * shell but never reaches this process, which went on serving. Under npm, then, a parent that
 * goes away means stop, as on SIGTERM (the command's own handler closes the server and its
 * shells). A closed terminal (SIGHUP) stops it the same way. Outside npm a parent may leave on
 * purpose (`nohup … &`), so nothing watches it there.
 */
/* global setInterval, clearInterval */
function stopWithParent() {
  const stop = () => process.kill(process.pid, 'SIGTERM');
  process.once('SIGHUP', stop);
  if (!process.env.npm_lifecycle_event) return;
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    stop();
  }, 500);
  watch.unref();
}

stopWithParent();
const main = await loadMain();
process.exitCode = await main(process.argv.slice(2));
