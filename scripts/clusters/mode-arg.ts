/** Turn a command-line word into a Mode, or a usage error that lists the modes. */
import { DplabError } from '../base/errors.ts';
import { isMode, MODES, type Mode } from '../catalogue/modes.ts';

export function parseModeArg(command: { name: string; usage: string }, value: string | undefined): Mode {
  if (isMode(value)) return value;
  const what = value === undefined ? 'a mode is required' : `unknown mode "${value.slice(0, 40)}"`;
  throw new DplabError(`dplab ${command.name}: ${what}. Modes: ${MODES.join(', ')}.`, { fix: `Usage: ${command.usage}`, status: 400 });
}
