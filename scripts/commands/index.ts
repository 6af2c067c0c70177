/** Every `dplab` sub-command, in the order `dplab help` lists them. Add one line per command. */
import type { Command } from './command.ts';
import { serve } from './serve.ts';
import { up } from './up.ts';
import { down } from './down.ts';
import { status } from './status.ts';
import { kubeconfig } from './kubeconfig.ts';
import { doctor } from './doctor.ts';
import { labs } from './labs.ts';
import { check } from './check.ts';
import { solve } from './solve.ts';
import { reset } from './reset.ts';
import { goto } from './goto.ts';
import { verifyLabsCommand } from './verify-labs.ts';
import { explain } from './explain.ts';
import { bench } from './bench.ts';
import { simBuild } from './sim-build.ts';
import { portal } from './portal.ts';

export const COMMANDS: readonly Command[] = [
  serve,
  portal,
  up,
  down,
  status,
  kubeconfig,
  doctor,
  labs,
  check,
  solve,
  reset,
  goto,
  verifyLabsCommand,
  explain,
  bench,
  simBuild,
];
