// How one proxy mode's rules are traced on a node: what turns tracing on for a flow, what reads
// the kernel's reports, what lists and removes every trace rule or table (a sweep and the end of
// every trace are the same removal). One record per mode (methods.ts); nothing else branches on it.
// An agent's method (Cilium) turns nothing on: its monitor reads the agent's own events, and what
// a trace leaves is that monitor itself, so `list`/`leftovers`/`remove` find and end monitors a
// runner started and lost. Its commands run where the mode's dataplane is read: in the node, or
// in the node's agent container (live-trace.ts, `traceNode`).
import type { PacketTrace, TraceMethodId } from '../../wire/trace.ts';
import type { FlowTarget, TraceFlow } from './flow.ts';
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
  /** Turns tracing on for this flow only (no command: nothing to turn on); fails when a trace is already on (see `list`). */
  enable(flow: TraceFlow, tag: string): NodeCommand[];
  /** The monitor's argv; it runs under `timeout` (monitorCommand), so it ends by itself. */
  monitor: readonly string[];
  /** Why a request sent may not be seen (the note when fewer were traced than sent), in parentheses' words. */
  unseen: string;
  /** What the monitor prints once it listens, when it says so (else the wrapper's line and a short wait stand for it). */
  listening?: RegExp;
  /** Lists what could hold a trace rule or table (or a trace's monitor). */
  list: NodeCommand;
  /** From that listing, the dplab trace rules, tables or monitors on the node (as the listing words them). */
  leftovers(listing: string): string[];
  /** The commands that remove those. */
  remove(leftovers: readonly string[]): NodeCommand[];
  /** The traced connections in the monitor's output; `target` gives the flow and the backends it may be sent to. */
  parse(output: string, target: FlowTarget): PacketTrace[];
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
