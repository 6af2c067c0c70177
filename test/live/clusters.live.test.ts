/**
 * Live tier: for each mode, bring up the real kind cluster, check the dataplane it reports,
 * then delete it. Runs only with DPLAB_LIVE=1 and a working Docker daemon.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { clusterHandle } from '../../scripts/clusters/handle.ts';
import { sharedClusterManager } from '../../scripts/runner/services.ts';

const clusterManager = sharedClusterManager();
import { MODE_INFO, MODES } from '../../scripts/clusters/modes.ts';
import { KPR_TRUE } from '../../scripts/clusters/actions.ts';

function skipReason(): string | undefined {
  if (process.env.DPLAB_LIVE !== '1') return 'DPLAB_LIVE is not 1 (run `npm run test:live`)';
  try {
    execFileSync('docker', ['info', '--format', '{{.ServerVersion}}'], { stdio: 'pipe', timeout: 15_000 });
  } catch {
    return '`docker info` failed: no Docker daemon on this machine';
  }
  return undefined;
}

const reason = skipReason();
if (reason) console.warn(`[live] skipped: ${reason}`);

describe.skipIf(!!reason)(`live clusters${reason ? ` (skipped: ${reason})` : ''}`, () => {
  for (const mode of MODES) {
    it(`${mode}: up, dataplane reports ${MODE_INFO[mode].proxyMode ?? 'KubeProxyReplacement: True'}, down`, async () => {
      try {
        const status = await clusterManager.ensure(mode, { onEvent: (e) => e.type === 'action' && console.log(`[${mode}] ${e.phase} ${e.title}`) });
        expect(status.state).toBe('ready');
        expect(status.nodes).toBe(3);
        const h = clusterHandle(mode);
        const nodes = await h.nodes();
        if (mode === 'cilium') {
          const r = await h.kubectl(['-n', 'kube-system', 'exec', 'ds/cilium', '-c', 'cilium-agent', '--', 'cilium-dbg', 'status']);
          expect(r.stdout).toMatch(KPR_TRUE);
        } else {
          for (const node of nodes) expect(await h.proxyMode(node)).toBe(MODE_INFO[mode].proxyMode);
        }
      } finally {
        await clusterManager.delete(mode);
      }
      expect((await clusterManager.status(mode)).state).toBe('absent');
    });
  }
});
