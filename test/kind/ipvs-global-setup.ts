/**
 * test:ipvs's one-time set-up: the kind test environment and its IPVS guest (a QEMU guest whose
 * kernel has ip_vs), built or reused with progress on stderr, then made ready for the sim
 * provider (shared folders mounted, the nodes' tools installed). The guest stays up afterwards
 * (`npm run testenv -- down --guest` stops it).
 */
import { ensureGuestEnv, ensureTestEnv } from './environment.ts';
import { prepareGuestSim } from './guest-sim.ts';

export default async function setup(): Promise<void> {
  const started = Date.now();
  const say = (l: string) => process.stderr.write(`[testenv] ${l}\n`);
  const guest = await ensureGuestEnv(await ensureTestEnv({ say }), { say });
  await prepareGuestSim(guest.nodeImage, say);
  say(`guest ready for the sim in ${Math.round((Date.now() - started) / 1000)} s (kernel ${guest.components.kernel})`);
}
