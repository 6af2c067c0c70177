/**
 * HTTP probes "from outside the cluster", for NodePort and externalTrafficPolicy labs.
 *
 * Why not from a sibling node (`docker exec <other-node> curl`): a node's host network
 * namespace is inside the cluster. With Cilium's kube-proxy replacement the socket-level load
 * balancer translates a NodePort `connect()` made there to a backend directly (Cilium docs:
 * NodePort services are reachable "from a host or a Pod within a cluster" thanks to socket LB;
 * in-cluster traffic to an `externalTrafficPolicy: Local` Service may use every backend), so
 * the packet never arrives at the target node as NodePort traffic and ETP Local is invisible.
 * A true outside client avoids that in every mode:
 *  - native Linux engine: the host itself (Node's http): the `kind` bridge is routable here and
 *    no Cilium hook is attached to the host's sockets (it attaches inside the node's cgroup);
 *  - Docker Desktop / non-Linux: node IPs live in the VM, and rootless Docker keeps them in
 *    RootlessKit's network namespace, so a throwaway helper container on the `kind` network runs curl. It uses the node image (already pulled, ships curl).
 * `DPLAB_PROBE_FROM=host|helper` overrides the choice.
 */
import { request } from 'node:http';
import { CommandError, run, type RunOptions } from '../base/exec.ts';
import { checkDocker, nodeIpsReachableFromHost } from '../preflight/docker.ts';
import { realSystem } from '../preflight/system.ts';
import { nodeImage } from './kind-overlay.ts';

export type ProbeRoute = 'host' | 'helper';

/** A probe that gets no answer within this long counts as "no answer" (ETP Local drops). */
const PROBE_TIMEOUT_SECONDS = 3;
/** kind puts every node on this Docker network. */
const KIND_NETWORK = 'kind';
/** Starting the helper container costs a second or two on top of the probe itself. */
const HELPER_OVERHEAD_MS = 20_000;

export interface ProbeResult {
  /** Who sent the request: `host` or `helper-container`. */
  from: string;
  url: string;
  /** False when the connection timed out or was refused. */
  answered: boolean;
  status?: number;
  body?: string;
  /** curl's exit code or the error text, for the check's "seen" line. */
  error?: string;
}

let cached: Promise<ProbeRoute> | undefined;

/** Decide once per process where probes come from. */
export function probeRoute(): Promise<ProbeRoute> {
  const forced = process.env.DPLAB_PROBE_FROM;
  if (forced === 'host' || forced === 'helper') return Promise.resolve(forced);
  cached ??= (async () => {
    if (process.platform !== 'linux') return 'helper';
    const { info } = await checkDocker(realSystem);
    return nodeIpsReachableFromHost(info, process.platform) ? 'host' : 'helper';
  })();
  cached.catch(() => (cached = undefined));
  return cached;
}

/** For tests: forget the cached decision. */
export function resetProbeRoute(): void {
  cached = undefined;
}

/** curl exit codes that mean "the node did not answer": refused, timed out, empty reply, reset. */
const NO_ANSWER_CURL = new Set([7, 28, 52, 56]);
const NO_ANSWER_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EPIPE']);

export function probeFromHost(url: string, signal?: AbortSignal): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    // A connection of its own every time (agent: false, Connection: close): Node's global agent
    // keeps sockets alive, and a probe that rode an earlier probe's connection would report what
    // the dataplane decided for that connection (a kept client address after the Service's
    // traffic policy changed, measured on real kind), not what it does now.
    const req = request(
      url,
      { method: 'GET', timeout: PROBE_TIMEOUT_SECONDS * 1000, signal, agent: false, headers: { connection: 'close' } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ from: 'host', url, answered: true, status: res.statusCode, body }));
        res.on('error', (e) => resolve({ from: 'host', url, answered: false, error: e.message }));
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${PROBE_TIMEOUT_SECONDS} s`), { code: 'ETIMEDOUT' })));
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code && NO_ANSWER_ERRNO.has(e.code)) resolve({ from: 'host', url, answered: false, error: `${e.code}: ${e.message}` });
      else reject(e);
    });
    req.end();
  });
}

async function probeFromHelper(url: string, opts?: RunOptions): Promise<ProbeResult> {
  const args = [
    'run',
    '--rm',
    '--network',
    KIND_NETWORK,
    '--entrypoint',
    'curl',
    nodeImage(),
    '-sS',
    '--max-time',
    String(PROBE_TIMEOUT_SECONDS),
    '-w',
    '\n%{http_code}',
    url,
  ];
  try {
    const r = await run('docker', args, { timeoutMs: PROBE_TIMEOUT_SECONDS * 1000 + HELPER_OVERHEAD_MS, ...opts });
    const cut = r.stdout.lastIndexOf('\n');
    return { from: 'helper-container', url, answered: true, status: Number(r.stdout.slice(cut + 1)), body: r.stdout.slice(0, cut) };
  } catch (err) {
    if (err instanceof CommandError && err.kind === 'failed' && NO_ANSWER_CURL.has(err.exitCode)) {
      return { from: 'helper-container', url, answered: false, error: err.stderr.trim() || `curl exit ${err.exitCode}` };
    }
    throw err;
  }
}

export async function probeUrl(url: string, opts?: RunOptions): Promise<ProbeResult> {
  return (await probeRoute()) === 'host' ? probeFromHost(url, opts?.signal) : probeFromHelper(url, opts);
}
