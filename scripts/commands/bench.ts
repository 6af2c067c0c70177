import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Command, CommandContext } from './command.ts';
import { parseFlags, usageError } from './command.ts';
import { commandInfo } from './catalogue.ts';
import { projectRoot } from '../paths.ts';
import { writeJoinedReport } from '../bench/lib/report.ts';

const BENCH_DIR = join(projectRoot, 'scripts', 'bench');

/** The benchmarks: every scripts/bench/<name>.ts (what they share is in scripts/bench/lib/). */
export function benchNames(): string[] {
  return readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => f.slice(0, -3))
    .sort();
}

/** Each benchmark runs as its own Node process (under tsx), so one cannot skew the next; its output goes to the command's streams. */
function runBench(name: string, args: string[], ctx: CommandContext): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(BENCH_DIR, `${name}.ts`), ...args], {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (b: Buffer) => ctx.stdout.write(b.toString()));
    child.stderr.on('data', (b: Buffer) => ctx.stderr.write(b.toString()));
    child.on('exit', (code) => resolve(code ?? 1));
    child.on('error', () => resolve(1));
  });
}

export const bench: Command = {
  ...commandInfo('bench'),
  async run(argv, ctx) {
    const { positionals } = parseFlags(this, argv, {}, true);
    const names = benchNames();
    const [name, ...args] = positionals;
    if (name !== undefined && !names.includes(name)) throw usageError(this, `no benchmark "${name}"; there are: ${names.join(', ')}.`);
    let worst = 0;
    for (const n of name ? [name] : names) {
      ctx.stdout.write(`\n== ${n} ==\n`);
      worst = Math.max(worst, await runBench(n, name ? args : [], ctx));
    }
    // Every benchmark that reported (this run's and earlier ones) in one table a person opens.
    ctx.stdout.write(`\nReport: ${writeJoinedReport()}\n`);
    return worst;
  },
};
