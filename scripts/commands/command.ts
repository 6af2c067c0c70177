/** A stream a command writes to; `isTTY` where it is a terminal (progress lines are redrawn in place). */
interface OutputStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** What the CLI hands every command, instead of the command re-reading process-wide state. */
export interface CommandContext {
  /** `--verbose` (a global flag: the CLI takes it off argv): show command output and stack traces. */
  verbose: boolean;
  /** Where the command's output goes (process.stdout in the CLI, a buffer in tests). */
  stdout: OutputStream;
  stderr: OutputStream;
  /** Cancels the command's work (the CLI's caller may stop it). */
  signal: AbortSignal;
}

/**
 * The CLI's context: the process's streams, not verbose, a signal nobody aborts; `overrides`
 * replace parts. Each part is made when first read: Node builds process.stdout and
 * process.stderr on first use, and a command that prints one line should not pay for both.
 */
export function commandContext(overrides: Partial<CommandContext> = {}): CommandContext {
  let signal: AbortSignal | undefined;
  return {
    verbose: false,
    get stdout() {
      return process.stdout;
    },
    get stderr() {
      return process.stderr;
    },
    get signal() {
      return (signal ??= new AbortController().signal);
    },
    ...overrides,
  };
}

/** The shape of one `dplab` sub-command. One file per command under scripts/commands/. */
export interface Command {
  name: string;
  /** One line for `dplab help`. */
  summary: string;
  /** Usage line(s), printed by `dplab help <name>` and on a usage error. */
  usage: string;
  /** Returns the process exit code. Throw a DplabError for a clear, friendly failure. */
  run(argv: string[], ctx: CommandContext): Promise<number>;
}

import { parseArgs, type ParseArgsConfig } from 'node:util';
import { DplabError } from '../base/errors.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

/** node:util parseArgs, with usage mistakes turned into a friendly error that shows the usage. */
export function parseFlags<O extends Options>(
  command: Pick<Command, 'name' | 'usage'>,
  argv: string[],
  options: O,
  allowPositionals = true,
) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    throw usageError(command, err instanceof Error ? err.message : String(err));
  }
}

export function usageError(command: Pick<Command, 'name' | 'usage'>, message: string): DplabError {
  return new DplabError(`dplab ${command.name}: ${message}`, { fix: `Usage: ${command.usage}`, status: 400 });
}
