// The node a trace runs on, as the trace sees it: a name and an exec seam, all through run(): the
// node itself (a cluster's `nodeExec`, or `ip netns exec` for a namespace node in the real-kernel
// tests), or the node's agent container (`kubectl exec`), for a dataplane an agent keeps.
import { CommandError, run, type CommandResult, type RunOptions } from '../../base/exec.ts';
import { DplabError } from '../../base/errors.ts';
import type { Agent } from '../../catalogue/modes.ts';
import type { ClusterHandle } from '../../clusters/handle.ts';
import { agentPodName } from '../live.ts';
import { execInAgentPod } from '../read-commands.ts';

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

/** kubectl's words when the pod or its container is gone (deleted, restarting, its node lost). */
const GONE = /\(NotFound\)|pods? "[^"]*" not found|container not found|unable to upgrade connection|is terminated/i;

/**
 * The node's agent container: its pod found once, at the first command; every later command goes
 * to that pod. When it is gone (the agent restarted mid-trace), what ran in it went with it, and
 * the error says so and what to do.
 */
export function agentNode(cluster: ClusterHandle, agent: Agent, node: string): TraceNode {
  let pod: Promise<string> | null = null;
  return {
    name: node,
    async exec(argv, opts = {}) {
      pod ??= agentPodName(cluster, agent, node, { signal: opts.signal, timeoutMs: opts.timeoutMs });
      const name = await pod.catch((err: unknown) => {
        pod = null;
        throw err;
      });
      try {
        return await cluster.kubectl(execInAgentPod(agent, name, argv), opts);
      } catch (err) {
        if (err instanceof CommandError && GONE.test(err.stderr))
          throw new DplabError(`The ${agent.name} agent on ${node} (pod ${name}) went away during the trace.`, {
            fix: `Wait until \`kubectl -n ${agent.namespace} get pods -l ${agent.podLabel} -o wide\` shows a new agent pod Running on ${node}, then trace again; what the trace ran in the old pod ended with it.`,
            details: err.stderr.trim().slice(0, 2000),
            status: 409,
          });
        throw err;
      }
    },
  };
}
