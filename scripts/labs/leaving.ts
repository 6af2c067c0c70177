/**
 * A lab leaves no trace on the next. Some labs change their cluster outside their namespace
 * (`setup.restore`: ipvs-inspect's `lc` scheduler in the kube-proxy ConfigMap and ipvsadm in the
 * nodes, etp-local's node label). Their own setup and Reset undo that; this file undoes it when
 * the learner *leaves*: the runner remembers which lab it last set up on each mode's cluster, and
 * setting up another lab there first runs the restorers of the one left. Re-opening the same lab
 * (a reload, a second tab) restores nothing, so a learner's own change survives it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stateDir } from '../base/paths.ts';
import type { Mode } from '../catalogue/modes.ts';
import type { ClusterHandle } from '../clusters/handle.ts';
import { loadLabs } from './registry.ts';
import type { Lab } from './schema.ts';

function markFile(mode: Mode): string {
  return join(stateDir(), 'labs', `last-on-${mode}`);
}

/** The lab last set up on this mode's cluster, if the runner remembers one. */
export function lastLabOn(mode: Mode): string | undefined {
  try {
    return readFileSync(markFile(mode), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

function remember(mode: Mode, labId: string): void {
  mkdirSync(join(stateDir(), 'labs'), { recursive: true });
  writeFileSync(markFile(mode), `${labId}\n`);
}

/**
 * Before `lab` is set up on `cluster`: undo what the lab set up there last changed outside its
 * namespace (when it was another lab, for this mode), then remember `lab`. Returns what was put
 * back, in the restorers' words, and what could not be (a restorer that fails is reported, and
 * the setup goes on).
 */
export async function leaveLastLab(lab: Lab, cluster: ClusterHandle, signal?: AbortSignal): Promise<string[]> {
  const mode = cluster.mode;
  const last = lastLabOn(mode);
  const left = last && last !== lab.id ? loadLabs().find((l) => l.id === last) : undefined;
  const done: string[] = [];
  if (left?.modes.includes(mode)) {
    for (const r of left.setup.restore) {
      try {
        const note = await r.run({ cluster, mode, signal });
        if (note) done.push(`${left.id}: ${note}`);
      } catch (err) {
        // The learner opened or reset *this* lab: what the last one left is put back when it can
        // be, and said plainly when it cannot; it never keeps this lab from being set up.
        if (signal?.aborted) throw err;
        done.push(`${left.id}: could not put back what it changed (${err instanceof Error ? err.message : String(err)})`);
      }
    }
  }
  remember(mode, lab.id);
  return done;
}
