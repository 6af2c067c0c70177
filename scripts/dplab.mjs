#!/usr/bin/env node
// Entry point of the `dplab` CLI. It runs the compiled CLI (dist-cli/cli.mjs, made by
// scripts/build-cli.mjs at `npm install`) when no source it was made from changed since, and
// compiles it again first when one did (well under a second). Only when compiling is not
// possible, or DPLAB_TSX=1 asks for it (developing the CLI), do the TypeScript sources run
// through tsx, which costs a few hundred milliseconds at every start.
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** True when dist-cli/inputs.json exists and every file it lists is older than the build. */
function compiledIsFresh() {
  try {
    const { builtAt, inputs } = JSON.parse(readFileSync(join(root, 'dist-cli', 'inputs.json'), 'utf8'));
    for (const file of inputs) if (statSync(join(root, file)).mtimeMs > builtAt) return false;
    return true;
  } catch {
    return false;
  }
}

async function loadMain() {
  // Stack traces (--verbose) in TypeScript lines: Node reads dist-cli/cli.mjs.map only when asked.
  if (process.argv.includes('--verbose')) process.setSourceMapsEnabled(true);
  if (process.env.DPLAB_TSX !== '1') {
    let fresh = compiledIsFresh();
    if (!fresh) {
      try {
        await (await import('./build-cli.mjs')).buildCli();
        fresh = true;
      } catch (err) {
        process.stderr.write(
          `Note: could not compile dplab (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); running the sources through tsx.\n`,
        );
      }
    }
    if (fresh) return (await import(pathToFileURL(join(root, 'dist-cli', 'cli.mjs')).href)).main;
  }
  const { register } = await import('tsx/esm/api');
  register();
  return (await import('./cli.ts')).main;
}

const main = await loadMain();
process.exitCode = await main(process.argv.slice(2));
