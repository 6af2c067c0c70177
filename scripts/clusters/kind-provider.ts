/** The kind provider: Docker containers as nodes, made and removed by the `kind` CLI. */
import { setTimeout as sleep } from 'node:timers/promises';
import { provisionActions } from './actions.ts';
import { kindNodeAccess, makeClusterHandle } from './handle.ts';
import { exportKubeconfig, kindClusters, kindDelete } from './kube.ts';
import { clusterName, type Mode } from '../catalogue/modes.ts';
import type { ClusterProvider } from './provider.ts';

/**
 * A stopped `kind create` leaves its `docker run`s to the engine, which may finish making a node
 * after the delete has run: look again this many times (a poll interval apart) and delete again.
 */
const LATE_NODE_LOOKS = 3;

export const kindProvider: ClusterProvider = {
  id: 'kind',
  actions: (mode: Mode) => provisionActions(mode),
  list: kindClusters,
  async exportKubeconfig(mode, opts) {
    await exportKubeconfig(mode, opts);
  },
  async delete(mode, opts) {
    await kindDelete(mode, opts);
    if (!opts.interrupted) return;
    for (let look = 0; look < LATE_NODE_LOOKS; look++) {
      await sleep(opts.interrupted.pollMs);
      if ((await kindClusters(opts)).includes(clusterName(mode))) await kindDelete(mode, opts);
    }
  },
  handle: (mode) => makeClusterHandle(mode, 'kind', kindNodeAccess(mode)),
  manualCleanup: (mode) => `kind delete cluster --name ${clusterName(mode)}`,
};
