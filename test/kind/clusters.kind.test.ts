/**
 * The learner's own stack, run for real: per mode a three-node kind cluster made by the
 * product's kind provider (`kind create` with the mode's config, Cilium's install, `kind load`)
 * on the test environment's engine, the dataplane it reports, every lab's author contract on
 * it, and the life of a cluster as on a laptop: a second `up` reuses it, a fresh runner (a new
 * manager) finds it ready, Ctrl-C during `up` leaves nothing behind, `down` removes it.
 * `DPLAB_KIND_MODES=iptables,cilium` narrows the modes.
 */
import { describe, expect, it } from 'vitest';
import { run } from '../../scripts/base/exec.ts';
import { ClusterManager } from '../../scripts/clusters/manager.ts';
import { clusterName, type Mode } from '../../scripts/catalogue/modes.ts';
import { labImages } from '../../scripts/labs/images.ts';
import { labContract, resetContract, upAndCheckDataplane } from '../live/contract.ts';

const KIND_MODES: readonly Mode[] = ['iptables', 'nftables', 'cilium'];
const modes = (process.env.DPLAB_KIND_MODES?.split(',').filter(Boolean) as Mode[] | undefined) ?? KIND_MODES;

async function kindClusters(): Promise<string[]> {
  return (await run('kind', ['get', 'clusters'], { timeoutMs: 30_000 })).stdout.split('\n').filter(Boolean);
}

async function nodeContainers(mode: Mode): Promise<string[]> {
  const r = await run('docker', ['ps', '-a', '--filter', `label=io.x-k8s.kind.cluster=${clusterName(mode)}`, '--format', '{{.Names}}'], {
    timeoutMs: 30_000,
  });
  return r.stdout.split('\n').filter(Boolean);
}

describe('real kind clusters through the product', () => {
  it('Ctrl-C during `up` stops the start and removes the half-made cluster', async () => {
    const mode: Mode = modes[0];
    const manager = new ClusterManager({ imagesFor: labImages });
    const controller = new AbortController();
    const phases: string[] = [];
    const started = manager.ensure(mode, {
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === 'action') phases.push(`${e.phase} ${e.id}`);
        // Cancel once kind has begun making the nodes.
        if (e.type === 'action' && e.id === 'create' && e.phase === 'start') setTimeout(() => controller.abort(), 8_000);
      },
    });
    await expect(started).rejects.toThrow(/cancel/i);
    expect(phases).toContain('start create');
    expect(await kindClusters()).not.toContain(clusterName(mode));
    expect(await nodeContainers(mode)).toEqual([]);
  });

  for (const mode of modes) {
    it(`${mode}: up, the dataplane, every lab's contract, Reset in place, a second up, a new runner, down`, async () => {
      const log = (l: string) => console.log(`[${mode}] ${l}`);
      const manager = new ClusterManager({ imagesFor: labImages });
      try {
        await upAndCheckDataplane(manager, mode, log);
        await labContract(mode, log);
        await resetContract(mode, log);
        // A second `up` finds the cluster and provisions nothing.
        const actions: string[] = [];
        const again = await manager.ensure(mode, { onEvent: (e) => e.type === 'action' && actions.push(e.id) });
        expect(again.state).toBe('ready');
        expect(actions).toEqual([]);
        // A restarted runner knows nothing in memory: it finds the cluster ready from kind and the kubeconfig.
        const fresh = new ClusterManager({ imagesFor: labImages });
        expect(await fresh.status(mode)).toMatchObject({ state: 'ready', nodes: 3, readyNodes: 3 });
      } finally {
        await manager.delete(mode);
      }
      expect((await manager.status(mode)).state).toBe('absent');
      expect(await nodeContainers(mode)).toEqual([]);
    });
  }
});
