// One trace, start to end: refuse if one is on already, turn tracing on for the flow, start the
// monitor (bounded by `timeout` on the node), send the requests once it listens, collect until
// every request is seen or the window closes, and remove every trace rule or table: always, also
// after an error or an abort. The caller gets the packets the kernel reported for the flow.
import { CommandError, TIMEOUTS, TIMEOUT_FACTOR } from '../../base/exec.ts';
import { DplabError } from '../../base/errors.ts';
import type { PacketTrace } from '../../wire/trace.ts';
import type { Address, TraceFlow } from './flow.ts';
import { MONITOR_READY, traceTag } from './marker.ts';
import { monitorCommand, type TraceMethod } from './method.ts';
import type { TraceNode } from './node.ts';
import { listLeftovers, sweepNode } from './sweep.ts';

/** After the monitor says it is starting, how long it takes to subscribe to the kernel's trace events. */
const SUBSCRIBE_MS = 300 * TIMEOUT_FACTOR;
/** Time after the last request for the kernel's last reports to arrive. */
const GRACE_MS = 500 * TIMEOUT_FACTOR;
/** How long the monitor may take to start (a `docker exec` on a loaded machine). */
const START_MS = 10_000 * TIMEOUT_FACTOR;

export interface TraceSession {
  method: TraceMethod;
  node: TraceNode;
  flow: TraceFlow;
  /** The backends the model says the flow's frontend translates to (a method that sees only translated packets needs them). */
  backends?: readonly Address[];
  /** Sends the requests (or waits for them); resolves with how many were sent. */
  send: (signal: AbortSignal) => Promise<number>;
  /** How many traced connections to wait for before ending early. */
  expected: number;
  /** The monitor's whole window, from its start. */
  windowMs: number;
  signal?: AbortSignal;
}

export interface SessionResult {
  packets: PacketTrace[];
  sent: number;
  /** The monitor's output as read (fixtures are made of this). */
  raw: string;
}

/** Traces in flight from this process, by node: the second asks for a clear 409 before touching the node. */
const busy = new Set<string>();

export async function runTrace(s: TraceSession): Promise<SessionResult> {
  if (busy.has(s.node.name)) throw alreadyTracing(s.node.name);
  busy.add(s.node.name);
  try {
    const before = await listLeftovers(s.node, s.method, s.signal);
    if (before.length) throw alreadyTracing(s.node.name, before);
    const stop = new AbortController();
    const signal = s.signal ? AbortSignal.any([s.signal, stop.signal]) : stop.signal;
    let raw = '';
    let ready: () => void = () => {};
    const listening = new Promise<void>((resolve) => (ready = resolve));
    // When the node refuses the first enable (nft: another runner's table appeared since the
    // listing), nothing here is ours to remove, and the sweep would take the other trace's.
    let ours = false;
    try {
      for (const [i, cmd] of s.method.enable(s.flow, traceTag()).entries()) {
        try {
          await s.node.exec(cmd.argv, { input: cmd.input, timeoutMs: TIMEOUTS.quick, signal });
        } catch (err) {
          // The first command failing added nothing; any later one leaves the earlier ones to remove.
          ours = i > 0;
          if (i === 0 && err instanceof CommandError && /exists/i.test(err.stderr)) throw alreadyTracing(s.node.name, [err.stderr.trim()]);
          throw err;
        }
        ours = true;
      }
      // From here on the monitor is ours too (an agent's method turns nothing on: its monitor is what a trace leaves).
      ours = true;
      const cmd = monitorCommand(s.method, Math.ceil(s.windowMs / 1000));
      const monitor = s.node
        .exec(cmd.argv, {
          signal,
          timeoutMs: s.windowMs + START_MS,
          onOutput: (text) => {
            raw += text;
            if (raw.includes(MONITOR_READY) && (!s.method.listening || s.method.listening.test(raw))) ready();
          },
        })
        .then(
          () => undefined,
          (err: unknown) => ended(err, s.signal),
        );
      // Awaited below; until then a failure must not be an unhandled rejection.
      monitor.catch(() => undefined);
      await Promise.race([listening, monitor.then(() => Promise.reject(monitorEnded(s.method, raw)))]);
      await delay(SUBSCRIBE_MS, signal);
      // A sender that does not heed the signal must not hold the trace (and its rules) open after Ctrl-C.
      const sent = await untilAborted(s.send(signal), signal);
      const deadline = Date.now() + s.windowMs;
      await delay(GRACE_MS, signal);
      while (Date.now() < deadline && seen(s, raw).length < Math.min(s.expected, sent)) {
        const finished = await Promise.race([monitor.then(() => true), delay(100, signal).then(() => false)]);
        if (finished) break;
      }
      stop.abort();
      await monitor;
      return { packets: seen(s, raw), sent, raw: withoutReady(raw) };
    } finally {
      stop.abort();
      if (ours)
        await sweepNode(s.node, s.method).catch((err: unknown) => {
          // Already worded (the agent went away, and what the trace ran with it).
          if (err instanceof DplabError) throw err;
          throw new DplabError(`The trace rules on ${s.node.name} could not be removed.`, {
            fix: `Run \`dplab trace <mode> --sweep --node ${s.node.name}\`; if that fails too, recreate the cluster.`,
            details: err instanceof Error ? err.message : String(err),
            status: 500,
          });
        });
    }
  } finally {
    busy.delete(s.node.name);
  }
}

/** The packets of the traced flow in what the monitor printed so far (a half-printed last line is left for later). */
function seen(s: TraceSession, raw: string): PacketTrace[] {
  const text = withoutReady(raw);
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  return s.method
    .parse(complete, { flow: s.flow, backends: s.backends ?? [] })
    .filter((p) => p.to.ip === s.flow.ip && p.to.port === s.flow.port);
}

const withoutReady = (raw: string) => raw.replace(`${MONITOR_READY}\n`, '');

/** Our own stop (and `timeout`'s exit 124) end the monitor normally; the caller's abort and failures do not. */
function ended(err: unknown, caller: AbortSignal | undefined): void {
  if (err instanceof CommandError && err.exitCode === 124) return;
  if (err instanceof CommandError && err.kind === 'aborted' && !caller?.aborted) return;
  throw err;
}

function monitorEnded(method: TraceMethod, raw: string): DplabError {
  return new DplabError(`${method.tool} ended before it started listening.`, { details: raw.slice(0, 2000), status: 502 });
}

function alreadyTracing(node: string, found: readonly string[] = []): DplabError {
  return new DplabError(`A trace is already running on ${node}.`, {
    fix: found.length
      ? 'Wait a few seconds for it to end and try again; if no trace is running (a runner stopped mid-trace), remove what it left with `dplab trace <mode> --sweep`.'
      : 'Wait for it to end (a few seconds) and try again.',
    details: found.length ? `Found on the node: ${found.join('; ')}` : undefined,
    status: 409,
  });
}

function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => (onAbort = () => reject(signal.reason)));
  signal.addEventListener('abort', onAbort, { once: true });
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
