// Cilium mode: the agent on the traced node reports its datapath's events, so nothing is turned on.
// `cilium-dbg monitor` runs in that node's agent container (under `timeout` there, so a lost
// `kubectl exec` cannot leave it running), started through `env` so that it carries the trace's
// mark in its environment: the listing finds a runner's monitor by it (/proc/<pid>/environ; the
// listing's own command line names the mark, its environment does not), and the removal ends it.
import type { TraceMethod } from './method.ts';
import { TRACE_MARK } from './marker.ts';
import { parseCiliumMonitor } from './cilium-monitor.ts';

/** The variable every trace monitor is started with. */
const MARK_VAR = `DPLAB_TRACE=${TRACE_MARK}`;

/** `<pid> <command line>` of each process whose environment holds the line `$1` (processes that end meanwhile, or that it may not read, are skipped quietly). */
const LIST = [
  'exec 2>/dev/null',
  "nl='",
  "'",
  'for d in /proc/[0-9]*; do',
  '  e=$(tr "\\0" "\\n" < "$d/environ") || continue',
  '  case "$nl$e$nl" in *"$nl$1$nl"*) printf "%s %s\\n" "${d#/proc/}" "$(tr "\\0" " " < "$d/cmdline")" ;; esac',
  'done',
].join('\n');

/** Ends the processes named (`$@`), waits up to 2 s for them to go (a zombie's command line is empty), then kills. */
const KILL = [
  'exec 2>/dev/null',
  'kill "$@"',
  'i=0',
  'while [ $i -lt 20 ]; do',
  '  left=',
  '  for p; do [ -n "$(tr -d "\\0" < /proc/$p/cmdline)" ] && left=1; done',
  '  [ -z "$left" ] && exit 0',
  '  i=$((i + 1)); sleep 0.1',
  'done',
  'kill -9 "$@"; exit 0',
].join('\n');

export const ciliumTrace: TraceMethod = {
  id: 'cilium-monitor',
  tool: 'cilium-dbg',
  enable: () => [],
  // trace: the datapath's packet events; trace-sock: the socket load balancer's (connect()); drop: why a packet died.
  monitor: ['env', MARK_VAR, 'cilium-dbg', 'monitor', '-t', 'trace', '-t', 'trace-sock', '-t', 'drop', '-v'],
  unseen:
    'Cilium refuses a connection to a Service without backends at connect(), so no packet is sent; and the monitor reports only what its agent saw, the traced node’s',
  // Printed once it is subscribed to the agent's events: requests sent before would go unseen.
  listening: /^Listening for events on /m,
  list: { argv: ['sh', '-c', LIST, 'sh', MARK_VAR] },
  leftovers: (listing) =>
    listing
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => /^\d+ \S/.test(l)),
  remove: (found) => (found.length ? [{ argv: ['sh', '-c', KILL, 'sh', ...found.map((l) => l.split(' ')[0])] }] : []),
  parse: parseCiliumMonitor,
};
