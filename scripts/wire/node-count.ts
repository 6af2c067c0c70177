/**
 * A ready cluster's nodes in words, for `dplab up`, `dplab status` and the cluster panel. The
 * count is read once provisioning ends (every node was Ready then); on a slow machine that read
 * can time out, or run before the API server lists the nodes, and leave 0 of 0. "0/0 nodes
 * Ready" would then be false, so a count of none says what is known instead. Imports nothing,
 * so the page loads no schema for it.
 */
export interface NodeCount {
  nodes: number;
  readyNodes: number;
}

export const NODES_NOT_COUNTED = 'nodes not counted yet (the API server did not list them in time)';

export function nodeCountText(s: NodeCount): string {
  return s.nodes > 0 ? `${s.readyNodes}/${s.nodes} nodes Ready` : NODES_NOT_COUNTED;
}
