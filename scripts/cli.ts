/**
 * `dplab`: dispatches to one command per file. Errors become one clear paragraph with the fix
 * and a non-zero exit; the stack trace only with --verbose.
 */
import { DplabError } from './errors.ts';
import { COMMANDS } from './commands/index.ts';
import { commandContext, type CommandContext } from './commands/command.ts';

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Dataplane Lab: how Kubernetes Services become packet forwarding.',
    '',
    'Usage: dplab <command> [options]',
    '',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Global: --verbose shows stack traces.  `dplab help <command>` shows its usage.',
  ].join('\n');
}

export function formatError(err: unknown, verbose: boolean): string {
  const lines: string[] = [];
  if (err instanceof DplabError) {
    lines.push(`Error: ${err.message}`);
    if (err.fix) lines.push(`Fix: ${err.fix}`);
    if (err.details && verbose) lines.push('', err.details);
    else if (err.details) lines.push('(run with --verbose for the command output)');
  } else {
    lines.push(`Error: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (verbose && err instanceof Error && err.stack) lines.push('', err.stack);
  return lines.join('\n');
}

export async function main(argv: string[], io: Partial<Omit<CommandContext, 'verbose'>> = {}): Promise<number> {
  const verbose = argv.includes('--verbose');
  const args = argv.filter((a) => a !== '--verbose');
  const ctx = commandContext({ ...io, verbose });
  const [name, ...rest] = args;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    const target = COMMANDS.find((c) => c.name === rest[0]);
    ctx.stdout.write(`${target ? `${target.summary}\n\n${target.usage}` : help()}\n`);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    ctx.stderr.write(`Error: unknown command "${name}".\n\n${help()}\n`);
    return 2;
  }
  try {
    return await command.run(rest, ctx);
  } catch (err) {
    ctx.stderr.write(`${formatError(err, verbose)}\n`);
    return err instanceof DplabError && err.status < 500 ? 2 : 1;
  }
}
