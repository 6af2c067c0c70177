/**
 * Readiness, liveness and startup probes: the pure bookkeeping (thresholds, initial state) and
 * the three handlers the stand-in supports (httpGet and tcpSocket from the node, as the kubelet
 * does; exec inside the pod's namespaces). gRPC probes report a clear failure.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

export interface Probe {
  httpGet?: {
    path?: string;
    port: number | string;
    host?: string;
    scheme?: 'HTTP' | 'HTTPS';
    httpHeaders?: Array<{ name: string; value: string }>;
  };
  tcpSocket?: { port: number | string; host?: string };
  exec?: { command?: string[] };
  grpc?: { port: number; service?: string };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
}

export type ProbeKind = 'readiness' | 'liveness' | 'startup';

/** The API's defaults for unset probe fields. */
export function probeTiming(p: Probe) {
  return {
    initialDelayMs: (p.initialDelaySeconds ?? 0) * 1000,
    periodMs: (p.periodSeconds ?? 10) * 1000,
    timeoutMs: (p.timeoutSeconds ?? 1) * 1000,
    successThreshold: p.successThreshold ?? 1,
    failureThreshold: p.failureThreshold ?? 3,
  };
}

export interface ProbeState {
  /** The result the kubelet acts on. */
  ok: boolean;
  successes: number;
  failures: number;
}

/** Readiness starts as failed (not ready until a probe passes); liveness and startup as passed. */
export function initialProbeState(kind: ProbeKind): ProbeState {
  return { ok: kind !== 'readiness', successes: 0, failures: 0 };
}

/** Count one outcome; the result flips only after successThreshold / failureThreshold in a row. */
export function recordProbe(state: ProbeState, passed: boolean, probe: Probe): ProbeState {
  const t = probeTiming(probe);
  if (passed) {
    const successes = state.successes + 1;
    return { ok: state.ok || successes >= t.successThreshold, successes, failures: 0 };
  }
  const failures = state.failures + 1;
  return { ok: state.ok && failures < t.failureThreshold, successes: 0, failures };
}

export interface ProbeContext {
  podIP: string;
  /** Container ports by name, for named probe ports. */
  namedPorts: Record<string, number>;
  /** Runs a command in the pod's namespaces; resolves with its exit code and output. */
  exec(command: string[], timeoutMs: number): Promise<{ exitCode: number; output: string }>;
}

export interface ProbeOutcome {
  passed: boolean;
  /** Why it failed, worded like the kubelet's Unhealthy events. */
  message: string;
}

export function resolvePort(port: number | string, named: Record<string, number>): number | null {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  return named[port] ?? null;
}

export async function runProbe(probe: Probe, ctx: ProbeContext): Promise<ProbeOutcome> {
  const { timeoutMs } = probeTiming(probe);
  if (probe.httpGet) {
    const port = resolvePort(probe.httpGet.port, ctx.namedPorts);
    if (port === null) return { passed: false, message: `Probe failed: no container port named "${probe.httpGet.port}"` };
    return httpProbe(
      probe.httpGet.scheme === 'HTTPS',
      probe.httpGet.host || ctx.podIP,
      port,
      probe.httpGet.path || '/',
      probe.httpGet.httpHeaders ?? [],
      timeoutMs,
    );
  }
  if (probe.tcpSocket) {
    const port = resolvePort(probe.tcpSocket.port, ctx.namedPorts);
    if (port === null) return { passed: false, message: `Probe failed: no container port named "${probe.tcpSocket.port}"` };
    return tcpProbe(probe.tcpSocket.host || ctx.podIP, port, timeoutMs);
  }
  if (probe.exec?.command?.length) {
    try {
      const r = await ctx.exec(probe.exec.command, timeoutMs);
      return r.exitCode === 0
        ? { passed: true, message: '' }
        : {
            passed: false,
            message: `Probe failed: command ${JSON.stringify(probe.exec.command)} exited with ${r.exitCode}: ${r.output.trim().slice(0, 200)}`,
          };
    } catch (err) {
      return { passed: false, message: `Probe errored: ${(err as Error).message}` };
    }
  }
  if (probe.grpc) return { passed: false, message: 'Probe failed: the sim kubelet stand-in does not run gRPC probes' };
  return { passed: false, message: 'Probe failed: no handler (httpGet, tcpSocket or exec)' };
}

function httpProbe(
  tls: boolean,
  host: string,
  port: number,
  path: string,
  headers: Array<{ name: string; value: string }>,
  timeoutMs: number,
): Promise<ProbeOutcome> {
  const url = `${tls ? 'https' : 'http'}://${host}:${port}${path.startsWith('/') ? path : `/${path}`}`;
  return new Promise((resolve) => {
    const req = (tls ? https : http).request(url, {
      method: 'GET',
      headers: { 'User-Agent': 'kube-probe/1.35', Accept: '*/*', ...Object.fromEntries(headers.map((h) => [h.name, h.value])) },
      rejectUnauthorized: false,
      agent: false,
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)));
    req.on('response', (res) => {
      res.resume();
      const code = res.statusCode ?? 0;
      resolve(
        code >= 200 && code < 400
          ? { passed: true, message: '' }
          : { passed: false, message: `Probe failed: HTTP probe failed with statuscode: ${code}` },
      );
    });
    req.on('error', (err) => resolve({ passed: false, message: `Probe failed: Get "${url}": ${err.message}` }));
    req.end();
  });
}

function tcpProbe(host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    const done = (o: ProbeOutcome) => {
      sock.destroy();
      resolve(o);
    };
    sock.setTimeout(timeoutMs, () => done({ passed: false, message: `Probe failed: dial tcp ${host}:${port}: i/o timeout` }));
    sock.on('connect', () => done({ passed: true, message: '' }));
    sock.on('error', (err) => done({ passed: false, message: `Probe failed: dial tcp ${host}:${port}: ${err.message}` }));
  });
}
