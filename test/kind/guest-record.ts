/**
 * Record IPVS labs on real ip_vs: `npx tsx test/kind/guest-record.ts [--fresh] <lab> [<lab> …]` brings up
 * (or reuses) the IPVS guest, makes it ready for the sim provider, brings up `dplab up ipvs` there
 * and runs `dplab verify-labs --mode ipvs --lab <lab> --record` for each lab named, writing the
 * recordings into this project (it is shared into the guest). The cluster stays up for the next
 * run (`npm run testenv -- down --guest` stops everything); `--fresh` removes it first (after the
 * guest was stopped, or when the sim provider itself changed). Progress and each run's table on stdout.
 */
import { CommandError } from '../../scripts/base/exec.ts';
import { ensureGuestEnv, ensureTestEnv } from './environment.ts';
import { guestDplab, prepareGuestSim } from './guest-sim.ts';

const fresh = process.argv.includes('--fresh');
const labs = process.argv.slice(2).filter((a) => a !== '--fresh');
if (!labs.length) {
  process.stderr.write('usage: npx tsx test/kind/guest-record.ts <lab> [<lab> …]\n');
  process.exit(2);
}
const say = (l: string) => process.stdout.write(`[guest-record ${new Date().toISOString().slice(11, 19)}] ${l}\n`);
const guest = await ensureGuestEnv(await ensureTestEnv({ say }), { say });
await prepareGuestSim(guest.nodeImage, say);
let t = Date.now();
if (fresh) {
  await guestDplab(['down', 'ipvs'], { timeoutMs: 5 * 60_000 });
  say(`down ipvs in ${Math.round((Date.now() - t) / 1000)} s`);
  t = Date.now();
}
const up = await guestDplab(['up', 'ipvs'], { timeoutMs: 30 * 60_000 });
say(`up ipvs in ${Math.round((Date.now() - t) / 1000)} s: ${up.stdout.trim().split('\n').pop()}`);
let failed = false;
for (const lab of labs) {
  t = Date.now();
  const r = await guestDplab(['verify-labs', '--mode', 'ipvs', '--lab', lab, '--record'], { timeoutMs: 180 * 60_000 }).catch(
    (err: unknown) => {
      if (err instanceof CommandError && err.exitCode === 1) return err;
      throw err;
    },
  );
  failed ||= r instanceof CommandError;
  say(`${lab}: verify-labs --record took ${Math.round((Date.now() - t) / 1000)} s`);
  process.stdout.write(`${r.stdout}\n${r.stderr.slice(-3000)}\n`);
}
process.exit(failed ? 1 : 0);
