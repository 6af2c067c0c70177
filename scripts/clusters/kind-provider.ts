/** The kind provider: Docker containers as nodes, made and removed by the `kind` CLI. */
import { provisionActions } from './actions.ts';
import { kindNodeAccess, makeClusterHandle } from './handle.ts';
import { exportKubeconfig, kindClusters, kindDelete } from './kube.ts';
import { clusterName } from './modes.ts';
import type { ClusterProvider } from './provider.ts';

export const kindProvider: ClusterProvider = {
  id: 'kind',
  actions: provisionActions,
  list: kindClusters,
  async exportKubeconfig(mode, opts) {
    await exportKubeconfig(mode, opts);
  },
  async delete(mode, opts) {
    await kindDelete(mode, opts);
  },
  handle: (mode) => makeClusterHandle(mode, 'kind', kindNodeAccess(mode)),
  manualCleanup: (mode) => `kind delete cluster --name ${clusterName(mode)}`,
};
