/**
 * What a lab terminal says before the prompt when its cluster is not ready. Wired to the
 * cluster manager's status so the learner knows why kubectl will fail.
 */
import type { Mode } from '../clusters/modes.ts';

export async function terminalNotice(_mode: Mode): Promise<string | null> {
  return null;
}
