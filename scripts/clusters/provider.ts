/**
 * The cluster provider seam: how a `dplab-<mode>` cluster comes to exist, is found, reached and
 * removed. `kind` (Docker + kind: the product's path) and `sim` (real control plane and
 * kube-proxy on network-namespace nodes, for recording labs without Docker) implement it; the
 * manager, checks and terminals only see this interface and the ClusterHandle it returns.
 */
import type { RunOptions } from '../base/exec.ts';
import type { Action } from './actions.ts';
import type { ClusterHandle } from './handle.ts';
import type { Mode } from '../catalogue/modes.ts';
import type { ProviderId } from '../catalogue/provider-ids.ts';

interface DeleteOptions extends RunOptions {
  /** The delete follows a create that was cancelled or failed while it ran; look again this often for what it was still making. */
  interrupted?: { pollMs: number };
}

export interface ClusterProvider {
  readonly id: ProviderId;
  /** The provisioning steps for a mode, in order (the one with id `create` makes something to clean up). */
  actions(mode: Mode): readonly Action[];
  /** Names of the clusters this provider has now (`dplab-iptables`, …). */
  list(opts: RunOptions): Promise<string[]>;
  /** Write the cluster's kubeconfig to kubeconfigPath(mode) when it went missing. */
  exportKubeconfig(mode: Mode, opts: RunOptions): Promise<void>;
  /**
   * Remove the cluster and everything it made; removing an absent cluster is fine. After a create
   * that was stopped part-way (`interrupted`), also remove what that create was still making.
   */
  delete(mode: Mode, opts: DeleteOptions): Promise<void>;
  handle(mode: Mode): ClusterHandle;
  /** The command that removes a leftover cluster by hand, for error messages. */
  manualCleanup(mode: Mode): string;
  /** False when the cluster exists but its provisioning never finished (a crash): not reused, reported broken. */
  isComplete?(mode: Mode): boolean;
}
