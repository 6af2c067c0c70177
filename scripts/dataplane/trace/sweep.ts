// Finding and removing every trace rule or table on a node: the end of every trace, and the
// clean-up after a runner that died mid-trace (`dplab trace --sweep`).
import { TIMEOUTS } from '../../base/exec.ts';
import type { TraceMethod } from './method.ts';
import type { TraceNode } from './node.ts';

export async function listLeftovers(node: TraceNode, method: TraceMethod, signal?: AbortSignal): Promise<string[]> {
  const r = await node.exec(method.list.argv, { timeoutMs: TIMEOUTS.quick, signal });
  return method.leftovers(r.stdout);
}

/**
 * Removes them all, then lists again: what is still there is an error. Never takes the caller's
 * abort signal: an aborted trace is exactly when this must still run.
 */
export async function sweepNode(node: TraceNode, method: TraceMethod): Promise<string[]> {
  const found = await listLeftovers(node, method);
  for (const cmd of method.remove(found)) await node.exec(cmd.argv, { timeoutMs: TIMEOUTS.quick, input: cmd.input });
  const still = await listLeftovers(node, method);
  if (still.length) throw new Error(`could not remove ${still.join('; ')} on ${node.name}`);
  return found;
}
