/** Which mode a CLI command acts on: `--mode`, else the mode last used for the lab, else the lab's first. */
import type { Mode } from '../catalogue/modes.ts';
import { readProgress } from './progress.ts';
import { loadLabs, requireMode } from './registry.ts';
import type { Lab } from './schema.ts';

export function chooseMode(lab: Lab, flag: string | undefined): Mode {
  if (flag) return requireMode(lab, flag);
  return readProgress(loadLabs()).labs[lab.id]?.mode ?? lab.modes[0];
}
