import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from './command.ts';
import { parseFlags } from './command.ts';
import { commandInfo } from './catalogue.ts';
import { DplabError } from '../base/errors.ts';
import { projectRoot } from '../base/paths.ts';

/**
 * The benchmarks live with the tests (test/bench/): they drive the runner on the test doubles,
 * so nothing of theirs is part of the CLI. This command starts their runner as its own process
 * (under tsx, as each benchmark runs) and copies its output to the command's streams.
 */
const RUNNER = join(projectRoot, 'test', 'bench', 'lib', 'run.ts');

export const bench: Command = {
  ...commandInfo('bench'),
  async run(argv, ctx) {
    const { positionals } = parseFlags(this, argv, {}, true);
    if (!existsSync(RUNNER)) {
      throw new DplabError('No benchmarks here: they are in test/bench/ of a checkout of the repository.', {
        fix: 'Run `npm run bench` in a clone of the repository.',
      });
    }
    return new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', RUNNER, ...positionals], {
        cwd: projectRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout.on('data', (b: Buffer) => ctx.stdout.write(b.toString()));
      child.stderr.on('data', (b: Buffer) => ctx.stderr.write(b.toString()));
      child.on('exit', (code) => resolve(code ?? 1));
      child.on('error', () => resolve(1));
    });
  },
};
