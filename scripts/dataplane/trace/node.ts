// The node a trace runs on, as the trace sees it: a name and the node-exec seam (a cluster's
// `nodeExec`, or `ip netns exec` for a namespace node in the real-kernel tests), both run().
import { run, type CommandResult, type RunOptions } from '../../base/exec.ts';
import type { ClusterHandle } from '../../clusters/handle.ts';

export interface TraceNode {
  name: string;
  exec(argv: readonly string[], opts?: RunOptions): Promise<CommandResult>;
}

export function clusterNode(cluster: ClusterHandle, node: string): TraceNode {
  return { name: node, exec: (argv, opts) => cluster.nodeExec(node, argv, opts) };
}

/** A network-namespace node (the real-kernel tests' netns-lab, the sim's nodes are reached the same way). */
export function namespaceNode(ns: string): TraceNode {
  return { name: ns, exec: (argv, opts) => run('ip', ['netns', 'exec', ns, ...argv], opts) };
}
