// Everything a trace puts on a node carries this name (a rule's comment, a table's name and
// comment), so a sweep finds what a runner that died mid-trace left behind.
export const TRACE_MARK = 'dplab-trace';

/** A short random tag per trace: `dplab-trace:<tag>` in comments says which trace wrote it. */
export function traceTag(): string {
  return Math.random().toString(36).slice(2, 10).padEnd(8, '0');
}

/** Printed by the monitor's wrapper just before it starts listening. */
export const MONITOR_READY = `${TRACE_MARK}-ready`;
