/**
 * Live tier: for each mode, bring up the real kind cluster, check the dataplane it reports, run
 * every lab's author contract on it (`verify-labs`: setup → check fails → solve → check passes),
 * then delete it. Runs only with DPLAB_LIVE=1 and a working Docker daemon.
 *
 * A `dplab-<mode>` cluster that exists before the suite starts is the user's: the suite never
 * deletes it and, unless DPLAB_LIVE_REUSE=1 says it may run the labs on it, skips that mode
 * with the reason. Running the suite twice gives the same result: each run starts from the
 * clusters it creates itself.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { sharedClusterManager } from '../../scripts/services/runner-services.ts';

const clusterManager = sharedClusterManager();
import { kubeProxyMode, MODES } from '../../scripts/catalogue/modes.ts';
import { labContract, upAndCheckDataplane } from './contract.ts';
import { mayDelete, modeSkip } from './ownership.ts';

function skipReason(): string | undefined {
  if (process.env.DPLAB_LIVE !== '1') return 'DPLAB_LIVE is not 1 (run `npm run test:live`)';
  try {
    execFileSync('docker', ['info', '--format', '{{.ServerVersion}}'], { stdio: 'pipe', timeout: 15_000 });
  } catch {
    return '`docker info` failed: no Docker daemon on this machine';
  }
  return undefined;
}

/** Clusters present before the suite touched anything: `kind get clusters`, read once. */
function preexisting(): Set<string> {
  try {
    return new Set(
      execFileSync('kind', ['get', 'clusters'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 })
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean),
    );
  } catch {
    return new Set();
  }
}

const reason = skipReason();
if (reason) console.warn(`[live] skipped: ${reason}`);
const before = reason ? new Set<string>() : preexisting();
const reuse = process.env.DPLAB_LIVE_REUSE === '1';

describe.skipIf(!!reason)(`live clusters${reason ? ` (skipped: ${reason})` : ''}`, () => {
  for (const mode of MODES) {
    const skip = modeSkip(mode, before, reuse);
    if (skip) console.warn(`[live] ${mode} skipped: ${skip}`);
    const ours = mayDelete(mode, before);
    it.skipIf(!!skip)(
      `${mode}: up, dataplane reports ${kubeProxyMode(mode) ?? 'KubeProxyReplacement: True'}, every lab's contract holds${skip ? ` (skipped: ${skip})` : ''}`,
      async () => {
        try {
          await upAndCheckDataplane(clusterManager, mode, (l) => console.log(`[${mode}] ${l}`));
          await labContract(mode, (l) => console.log(`[${mode}] ${l}`));
        } finally {
          // Only what this run created is deleted.
          if (ours) await clusterManager.delete(mode);
        }
        if (ours) expect((await clusterManager.status(mode)).state).toBe('absent');
      },
    );
  }
});
