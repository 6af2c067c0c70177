/**
 * Where each `dplab` sub-command's code is. A command's file is imported only when that command
 * runs (the compiled CLI makes each one a chunk of its own), so `dplab help` reads the catalogue
 * alone and `dplab serve` loads the server, not the portal or the parsers. A new command: its
 * entry in catalogue.ts, its file, and one line here (the type asks for every name).
 */
import type { Command } from './command.ts';
import type { CommandName } from './catalogue.ts';

const LOADERS: { readonly [N in CommandName]: () => Promise<Command> } = {
  serve: async () => (await import('./serve.ts')).serve,
  build: async () => (await import('./build.ts')).build,
  portal: async () => (await import('./portal.ts')).portal,
  up: async () => (await import('./up.ts')).up,
  down: async () => (await import('./down.ts')).down,
  status: async () => (await import('./status.ts')).status,
  kubeconfig: async () => (await import('./kubeconfig.ts')).kubeconfig,
  doctor: async () => (await import('./doctor.ts')).doctor,
  labs: async () => (await import('./labs.ts')).labs,
  check: async () => (await import('./check.ts')).check,
  solve: async () => (await import('./solve.ts')).solve,
  reset: async () => (await import('./reset.ts')).reset,
  goto: async () => (await import('./goto.ts')).goto,
  'verify-labs': async () => (await import('./verify-labs.ts')).verifyLabsCommand,
  explain: async () => (await import('./explain.ts')).explain,
  trace: async () => (await import('./trace.ts')).trace,
  bench: async () => (await import('./bench.ts')).bench,
  'sim-build': async () => (await import('./sim-build.ts')).simBuild,
};

/** The command's code (its module is imported now, once). */
export function loadCommand(name: CommandName): Promise<Command> {
  return LOADERS[name]();
}
