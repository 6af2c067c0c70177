/**
 * The sim provider inside the IPVS guest. kind's three nodes under software emulation never
 * settled (the API server's own loopback TLS handshakes timed out and it restarted again and
 * again; see README), while the sim provider's cluster, the same real control plane and
 * kube-proxy without containerd, kubelets and node containers, comes up in the guest in minutes.
 * So the IPVS tier runs the product's own CLI (`dplab up ipvs`, `verify-labs`, `down`, with
 * `DPLAB_PROVIDER=sim`) in the guest's kernel, which has ip_vs, over the project, the sim's
 * binaries, Node.js and Go shared from this machine at the same paths (GUEST_SHARES), so its
 * recordings land in this project.
 *
 * Commands reach the guest through `inGuest` (test/kind/guest.ts).
 */
import { CommandError, type CommandResult, type RunOptions } from '../../scripts/base/exec.ts';
import { DplabError } from '../../scripts/base/errors.ts';
import { projectRoot } from '../../scripts/base/paths.ts';
import { simBinDir } from '../../scripts/sim/build.ts';
import { ensureGuestShell, GUEST_SHARES, GUEST_TIMEOUT_FACTOR, goRoot, inGuest } from './guest.ts';

/** The guest's own state folder for the sim (on its disk, not the shared project). */
const GUEST_SIM_STATE = '/var/tmp/dplab-sim';
/** What the sim needs in a node beyond the guest's base system (the tools lab commands run in nodes and pods). */
const GUEST_SIM_PACKAGES = ['nftables', 'ipset', 'conntrack', 'curl', 'bind9-dnsutils', 'openssl'];

/** The environment the product runs with in the guest: the sim provider, the shared binaries first on PATH. */
function guestSimEnv(): string[] {
  return [
    `PATH=${goRoot()}/bin:${GUEST_SHARES[2].path()}:${simBinDir()}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
    `GOROOT=${goRoot()}`,
    'DPLAB_PROVIDER=sim',
    `DPLAB_STATE_DIR=${GUEST_SIM_STATE}`,
    'DPLAB_SHELL_NORC=1',
    'NO_COLOR=1',
    'HOME=/root',
    `DPLAB_TIMEOUT_FACTOR=${GUEST_TIMEOUT_FACTOR}`,
    'DPLAB_CHECK_DEADLINE_MS=360000',
  ];
}

/** `dplab …` in the guest, from the shared project, with the sim provider (`env` adds `NAME=value` entries there). */
export function guestDplab(args: readonly string[], opts: RunOptions & { guestEnv?: Record<string, string> } = {}): Promise<CommandResult> {
  const extra = Object.entries(opts.guestEnv ?? {}).map(([k, v]) => `${k}=${v}`);
  return inGuest(['env', '-C', projectRoot, ...guestSimEnv(), ...extra, 'node', 'scripts/dplab.mjs', ...args], opts);
}

async function mounted(at: string): Promise<boolean> {
  const r = await inGuest(['mountpoint', '-q', at], { timeoutMs: 30_000 }).catch((err: unknown) => err);
  return !(r instanceof CommandError);
}

/**
 * Make the running guest ready for the sim: the helper container, the shared folders mounted
 * at their paths here, and the packages the sim's nodes use. Idempotent.
 */
export async function prepareGuestSim(image: string, say: (l: string) => void): Promise<void> {
  await ensureGuestShell(image);
  for (const share of GUEST_SHARES) {
    const at = share.path();
    if (await mounted(at)) continue;
    await inGuest(['mkdir', '-p', at], { timeoutMs: 30_000 });
    const options = `trans=virtio,version=9p2000.L,msize=524288${share.readonly ? ',ro' : ''}`;
    try {
      await inGuest(['mount', '-t', '9p', '-o', options, share.tag, at], { timeoutMs: 60_000 });
    } catch (err) {
      throw new DplabError(`The IPVS guest has no shared folder ${share.tag} (${at}).`, {
        fix: 'It was started before the folder was shared: restart it with `npm run testenv -- down --guest`, then run again.',
        cause: err,
      });
    }
    say(`guest: ${at} mounted from this machine (9p)`);
  }
  const missing = (
    await inGuest(
      [
        'sh',
        '-c',
        `for p in ${GUEST_SIM_PACKAGES.join(' ')}; do dpkg-query -W -f='\${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || echo "$p"; done`,
      ],
      {
        timeoutMs: 120_000,
      },
    )
  ).stdout
    .split('\n')
    .filter(Boolean);
  if (missing.length) {
    say(`guest: installing ${missing.join(', ')}`);
    await inGuest(
      ['sh', '-c', `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${missing.join(' ')} >/dev/null`],
      {
        timeoutMs: 20 * 60_000,
      },
    );
  }
}
