/**
 * The benchmarks' runner, what `dplab bench [<name> [args…]]` (`npm run bench`) starts: every
 * test/bench/<name>.ts, or the one named with its arguments, each in its own Node process (under
 * tsx) so one cannot skew the next, then every saved report (this run's and earlier ones) joined
 * into the one table a person opens. The benchmarks live with the tests because they drive the
 * runner the way the tests do (its process, the terminal client, the cluster test doubles);
 * what they share is in test/bench/lib/.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectRoot } from '../../../scripts/base/paths.ts';
import { writeJoinedReport } from './report.ts';

const BENCH_DIR = dirname(dirname(fileURLToPath(import.meta.url)));

/** The benchmarks: every test/bench/<name>.ts. */
export function benchNames(): string[] {
  return readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => f.slice(0, -3))
    .sort();
}

function runBench(name: string, args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(BENCH_DIR, `${name}.ts`), ...args], {
      cwd: projectRoot,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('exit', (code) => resolve(code ?? 1));
    child.on('error', () => resolve(1));
  });
}

async function main(argv: string[]): Promise<number> {
  const names = benchNames();
  const [name, ...args] = argv;
  if (name !== undefined && !names.includes(name)) {
    process.stderr.write(`Error: no benchmark "${name}"; there are: ${names.join(', ')}.\n`);
    return 2;
  }
  let worst = 0;
  for (const n of name ? [name] : names) {
    process.stdout.write(`\n== ${n} ==\n`);
    worst = Math.max(worst, await runBench(n, name ? args : []));
  }
  process.stdout.write(`\nReport: ${writeJoinedReport()}\n`);
  return worst;
}

process.exitCode = await main(process.argv.slice(2));
