/**
 * The cluster status tells the rest of the page when a mode's cluster changes state (the
 * terminal tabs add node shells once it is ready, the lab applies its setup). The last state
 * is also kept on <html data-dplab-cluster-<mode>>, so a listener that arrives late still knows.
 */
const CLUSTER_EVENT = 'dplab:cluster';

export interface ClusterStateEvent {
  mode: string;
  /** absent, provisioning, ready, broken, offline or loading */
  state: string;
}

const attr = (mode: string) => `dplabCluster${mode.charAt(0).toUpperCase()}${mode.slice(1)}`;

export function announceClusterState(mode: string, state: string): void {
  const html = document.documentElement;
  if (html.dataset[attr(mode)] === state) return;
  html.dataset[attr(mode)] = state;
  document.dispatchEvent(new CustomEvent<ClusterStateEvent>(CLUSTER_EVENT, { detail: { mode, state } }));
}

export function lastClusterState(mode: string): string | undefined {
  return document.documentElement.dataset[attr(mode)];
}

export function onClusterState(listener: (e: ClusterStateEvent) => void): () => void {
  const handler = (ev: Event) => listener((ev as CustomEvent<ClusterStateEvent>).detail);
  document.addEventListener(CLUSTER_EVENT, handler);
  return () => document.removeEventListener(CLUSTER_EVENT, handler);
}
