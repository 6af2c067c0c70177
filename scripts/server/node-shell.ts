/**
 * The argv of a terminal tab on a cluster node. The browser names a mode and a node; the node
 * must be one the mode's cluster lists right now, and the argv comes from the cluster handle
 * (`docker exec -it <node> bash` under kind), so nothing the client sends becomes a command.
 */
import { type ClusterHandle } from '../clusters/handle.ts';
import { clusterHandle } from '../clusters/providers.ts';
import type { Mode } from '../catalogue/modes.ts';
import { DplabError } from '../base/errors.ts';

/** Node names as kind makes them; anything else is refused before a command runs. */
const NODE_NAME = /^[a-z0-9][a-z0-9.-]{0,62}$/;

export async function nodeShellFor(
  mode: Mode | null,
  node: string,
  handle: (m: Mode) => ClusterHandle = clusterHandle,
): Promise<readonly string[]> {
  if (!mode) throw new DplabError('A node shell needs a mode (?mode=iptables&node=…).', { status: 400 });
  if (!NODE_NAME.test(node)) throw new DplabError(`"${node.slice(0, 40)}" is not a node name.`, { status: 400 });
  const cluster = handle(mode);
  let nodes: string[];
  try {
    nodes = await cluster.nodes({ timeoutMs: 10_000 });
  } catch (err) {
    throw new DplabError(`The ${mode} cluster's nodes could not be listed: ${err instanceof Error ? err.message : String(err)}`, {
      status: 409,
    });
  }
  if (!nodes.includes(node)) throw new DplabError(`${node} is not a node of the ${mode} cluster (${nodes.join(', ')}).`, { status: 404 });
  return cluster.nodeShell(node);
}
