// How one proxy mode's rules are traced on a node: what turns tracing on for a flow, what reads
// the kernel's reports, what lists and removes every trace rule or table (a sweep and the end of
// every trace are the same removal). One record per mode (methods.ts); nothing else branches on it.
import type { PacketTrace, TraceMethodId } from '../../wire/trace.ts';
import type { TraceFlow } from './flow.ts';
import { MONITOR_READY, TRACE_MARK } from './marker.ts';

/** One command run on the node, optionally with stdin. */
export interface NodeCommand {
  argv: readonly string[];
  input?: string;
}

export interface TraceMethod {
  id: TraceMethodId;
  /** The tool the node needs for it (named in the error when it is missing). */
  tool: string;
  /** Turns tracing on for this flow only; fails when a trace is already on (see `list`). */
  enable(flow: TraceFlow, tag: string): NodeCommand[];
  /** The monitor's argv; it runs under `timeout` (monitorCommand), so it ends by itself. */
  monitor: readonly string[];
  /** Lists what could hold a trace rule or table. */
  list: NodeCommand;
  /** From that listing, the dplab trace rules or tables on the node (as the listing words them). */
  leftovers(listing: string): string[];
  /** The commands that remove those. */
  remove(leftovers: readonly string[]): NodeCommand[];
  parse(output: string): PacketTrace[];
}

/**
 * The monitor under `timeout` (so it ends even if the runner dies or `docker exec` loses it),
 * announcing itself first: the runner sends requests only once the line has come back.
 */
export function monitorCommand(method: TraceMethod, seconds: number): NodeCommand {
  return {
    argv: ['sh', '-c', `echo ${MONITOR_READY}; t=$1; shift; exec timeout "$t" "$@"`, TRACE_MARK, String(seconds), ...method.monitor],
  };
}
