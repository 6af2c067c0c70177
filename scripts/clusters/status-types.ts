/** The shapes `status()` returns and the API/panel show. */
import type { Mode } from './modes.ts';

export type ClusterState = 'absent' | 'provisioning' | 'ready' | 'broken';

export interface ErrorJson {
  message: string;
  fix?: string;
  details?: string;
}

export type ActionState = 'pending' | 'running' | 'done' | 'failed' | 'skipped';

export interface ActionProgress {
  id: string;
  title: string;
  state: ActionState;
  startedAt?: number;
  endedAt?: number;
}

export interface Progress {
  runId: string;
  startedAt: number;
  /** Set when the run finished (success or failure). */
  endedAt?: number;
  actions: ActionProgress[];
  /** Informational lines (skipped images, deleting a leftover cluster). */
  notes: string[];
}

export interface ClusterStatus {
  mode: Mode;
  name: string;
  state: ClusterState;
  /** Node containers seen (0 when absent). */
  nodes: number;
  /** Nodes reporting Ready. */
  readyNodes: number;
  /** The dataplane this cluster runs (from the modes registry): iptables, ipvs, nftables, or cilium. */
  proxyMode: string;
  /** Path of its kubeconfig (in the state folder). */
  kubeconfig: string;
  /** Why it is broken, or why the last start failed. */
  error?: ErrorJson;
  /** The current or last provisioning run. */
  progress?: Progress;
}
