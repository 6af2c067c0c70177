/** Every `dplab` sub-command, in the order `dplab help` lists them. Add one line per command. */
import type { Command } from './command.ts';
import { serve } from './serve.ts';

export const COMMANDS: readonly Command[] = [
  serve,
];
