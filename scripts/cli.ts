/**
 * `dplab`: dispatches to one command per file. Errors become one clear paragraph with the fix
 * and a non-zero exit; the stack trace only with --verbose. Help comes from the catalogue alone;
 * a command's code is loaded only when it runs.
 */
import { DplabError } from './base/errors.ts';
import { CATALOGUE, isCommandName } from './commands/catalogue.ts';
import { loadCommand } from './commands/index.ts';
import { commandContext, type CommandContext } from './commands/command.ts';
import { isProviderId, PROVIDERS } from './catalogue/provider-ids.ts';

function help(): string {
  const width = Math.max(...CATALOGUE.map((c) => c.name.length));
  return [
    'Dataplane Lab: how Kubernetes Services become packet forwarding.',
    '',
    'Usage: dplab <command> [options]',
    '',
    ...CATALOGUE.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Global: --verbose shows stack traces.  `dplab help <command>` shows its usage.',
    `        --provider ${PROVIDERS.join('|')} (or DPLAB_PROVIDER) picks how clusters are made: kind (default; Docker)`,
    '        or sim (real control plane and kube-proxy on network-namespace nodes; Linux + root, iptables/nftables).',
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

/** Take the global `--provider <id>` / `--provider=<id>` out of argv; it becomes DPLAB_PROVIDER for every command. */
export function takeProviderFlag(argv: string[]): { args: string[]; provider?: string } {
  const args: string[] = [];
  let provider: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--provider') provider = argv[++i] ?? '';
    else if (a.startsWith('--provider=')) provider = a.slice('--provider='.length);
    else args.push(a);
  }
  return { args, provider };
}

export async function main(argv: string[], io: Partial<Omit<CommandContext, 'verbose'>> = {}): Promise<number> {
  const verbose = argv.includes('--verbose');
  const taken = takeProviderFlag(argv.filter((a) => a !== '--verbose'));
  const args = taken.args;
  const ctx = commandContext({ ...io, verbose });
  if (taken.provider !== undefined) {
    if (!isProviderId(taken.provider)) {
      ctx.stderr.write(`Error: --provider must be one of ${PROVIDERS.join(', ')} (got "${taken.provider}").\n`);
      return 2;
    }
    process.env.DPLAB_PROVIDER = taken.provider;
  }
  const [name, ...rest] = args;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    const target = CATALOGUE.find((c) => c.name === rest[0]);
    ctx.stdout.write(`${target ? `${target.summary}\n\n${target.usage}` : help()}\n`);
    return 0;
  }
  if (!isCommandName(name)) {
    ctx.stderr.write(`Error: unknown command "${name}".\n\n${help()}\n`);
    return 2;
  }
  try {
    const command = await loadCommand(name);
    return await command.run(rest, ctx);
  } catch (err) {
    ctx.stderr.write(`${formatError(err, verbose)}\n`);
    return err instanceof DplabError && err.status < 500 ? 2 : 1;
  }
}
