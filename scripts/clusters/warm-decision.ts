/**
 * Whether the runner starts a cluster ahead (issue 41: the next lab's cluster warms while the
 * learner works on this one). One place decides, and a decline says why in one sentence with
 * its figures; the memory figures are the doctor's (`checkMemory`, CLUSTER_FOOTPRINT in scripts/catalogue/modes.ts).
 */
import { MODE_INFO, MODES, type Mode } from '../catalogue/modes.ts';
import { checkMemory } from '../preflight/memory.ts';
import type { PreflightSystem } from '../preflight/types.ts';
import type { ClusterStatus, WarmDecline } from '../wire/clusters.ts';

export interface WarmFacts {
  mode: Mode;
  /** The learner turned starting ahead off (the page's own setting). */
  optedOut: boolean;
  /** The runner's own switch (`dplab serve --no-warm` turns it off). */
  enabled: boolean;
  /** This runner serves a workshop seat (DPLAB_SEAT). */
  seat: boolean;
  /** Every mode's cluster as the runner sees it now; read only when the choices above allow warming. */
  clusters: () => Promise<readonly Pick<ClusterStatus, 'mode' | 'state'>[]>;
  /** The host's memory, as the doctor reads it. */
  system: PreflightSystem;
  /**
   * What on this host stops the mode's cluster from starting (the preflight's first failure, such
   * as a kernel without ip_vs), or undefined; asked last, since it runs `docker`, `kind` and `kubectl`.
   */
  blocker: () => Promise<string | undefined>;
}

export type WarmDecision = { warm: true; message: string } | { warm: false; reason: WarmDecline; message: string };

const STATE_WORDS: Record<ClusterStatus['state'], string> = {
  absent: 'absent',
  provisioning: 'already starting',
  ready: 'already running',
  broken: 'there but not healthy',
};

export async function warmDecision(f: WarmFacts): Promise<WarmDecision> {
  const name = `the ${MODE_INFO[f.mode].short} cluster`;
  const no = (reason: WarmDecline, message: string): WarmDecision => ({ warm: false, reason, message });
  if (f.optedOut) return no('opted-out', 'You turned off starting the next lab’s cluster ahead.');
  if (!f.enabled) return no('off', 'This runner was started with --no-warm, so it starts no cluster ahead.');
  // A seat's memory is the workshop's budget (`dplab doctor --seats`), counted for the clusters
  // its learner starts; the host's free memory says nothing about what the other seats will need.
  if (f.seat) return no('seat', 'Workshop seats start no cluster ahead: the host’s memory is shared among the seats.');
  const clusters = await f.clusters();
  const own = clusters.find((c) => c.mode === f.mode);
  if (own && own.state !== 'absent') return no('exists', `${capital(name)} is ${STATE_WORDS[own.state]}.`);
  const busy = MODES.filter((m) => clusters.some((c) => c.mode === m && c.state === 'provisioning'));
  if (busy.length > 0)
    return no('busy', `The ${busy.map((m) => MODE_INFO[m].short).join(' and ')} cluster is still starting; one cluster starts at a time.`);
  const memory = checkMemory(f.system, [f.mode], 1);
  // Only when the doctor would say ok: a warning (too little, or unknown) is a reason not to.
  if (memory.status !== 'ok') return no('memory', `${memory.detail.replace(/one cluster needs/, `${name} needs`)}`);
  // A start that would fail at its first step is not tried: the lab's own page says why and how to fix it.
  const blocker = await f.blocker();
  if (blocker) return no('host', `${capital(name)} cannot start here. ${blocker}`);
  return { warm: true, message: `Starting ${name} ahead: ${memory.detail.replace(/one cluster needs/, 'it needs')}` };
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
