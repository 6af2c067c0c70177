/**
 * What checks, terminals and the dataplane explorer use to look at a lab cluster: kubectl JSON
 * reads, commands inside a node (`docker exec`, just another CommandRunner), HTTP probes from
 * outside a node, and kube-proxy's own endpoints. Every read goes through scripts/base/exec.ts; how a
 * node is reached (kind: `docker exec`; sim: `ip netns exec`) is the provider's NodeAccess.
 */
import { run, nodeRunner, TIMEOUTS, type CommandResult, type RunOptions } from '../base/exec.ts';
import type { z } from 'zod';
import { DplabError } from '../base/errors.ts';
import { describeIssues } from '../wire/validate.ts';
import { clusterName, kubeconfigPath, type Mode } from '../catalogue/modes.ts';
import { probeUrl, type ProbeResult } from './probe.ts';
import type { ProviderId } from '../catalogue/provider-ids.ts';

/** kube-proxy's metrics/healthz address inside each node (hostNetwork). */
const KUBE_PROXY_METRICS = 'http://127.0.0.1:10249';
export { type ProbeResult } from './probe.ts';

export interface ClusterHandle {
  readonly mode: Mode;
  /** Which provider made the cluster (absent on test handles: treated as kind). */
  readonly provider?: ProviderId;
  readonly name: string;
  readonly kubeconfig: string;
  /**
   * Folders whose programs come before the runner's PATH for whatever runs against this cluster:
   * its kubectl and node exec here, the lab terminals and solutions (`pathWith`). The sim's
   * kubectl and its `docker exec` shim; none under kind. Passed as RunOptions' `pathFirst`: the
   * runner's own PATH is never changed.
   */
  readonly pathFirst?: readonly string[];
  /** kubectl against this cluster's kubeconfig (never ~/.kube/config). */
  kubectl(args: readonly string[], opts?: RunOptions): Promise<CommandResult>;
  /** `kubectl … -o json`, parsed and checked against `schema` (an answer of another shape is an error naming the field). */
  kubectlJson<S extends z.ZodTypeAny>(args: readonly string[], schema: S, opts?: RunOptions): Promise<z.output<S>>;
  /** Node container names, control plane first (`dplab-<mode>-control-plane`, `…-worker`, …). */
  nodes(opts?: RunOptions): Promise<string[]>;
  /** Run a command inside a node container. */
  nodeExec(node: string, args: readonly string[], opts?: RunOptions): Promise<CommandResult>;
  /** The argv of an interactive shell inside a node, for a terminal tab (a pty runs it). */
  nodeShell(node: string): readonly string[];
  /** The node's address on the node network (kind: the `kind` Docker network). */
  nodeIp(node: string, opts?: RunOptions): Promise<string>;
  /** What kube-proxy on that node says its mode is (`iptables`, `ipvs`, `nftables`). */
  proxyMode(node: string, opts?: RunOptions): Promise<string>;
  /** kube-proxy's Prometheus metrics text on that node. */
  metrics(node: string, opts?: RunOptions): Promise<string>;
  /**
   * An HTTP GET to `http://<nodeIp>:<port><path>` from outside the cluster: from the host on a
   * native Linux engine, else from a helper container on the `kind` network. Not from a sibling
   * node: Cilium's socket LB would translate the connect there and hide traffic policies
   * (see probe.ts). `from` says which one sent it.
   */
  probeFromOutside(node: string, port: number, path: string, opts?: RunOptions): Promise<ProbeResult>;
}

/** How one provider reaches its nodes; the rest of a handle is the same for every provider. */
export interface NodeAccess {
  /** The provider's own programs, first on PATH for kubectl and node exec (ClusterHandle's `pathFirst`). */
  pathFirst?: readonly string[];
  nodes(opts?: RunOptions): Promise<string[]>;
  nodeExec(node: string, args: readonly string[], opts?: RunOptions): Promise<CommandResult>;
  /** The argv of an interactive shell inside the node (a pty runs it). */
  nodeShell(node: string): readonly string[];
  nodeIp(node: string, opts?: RunOptions): Promise<string>;
  probeFromOutside(node: string, port: number, path: string, opts?: RunOptions): Promise<ProbeResult>;
}

/** Control plane first, then the workers by name (kind's and the sim's node order). */
export function sortNodes(list: string[]): string[] {
  return list.sort((a, b) => Number(!a.endsWith('control-plane')) - Number(!b.endsWith('control-plane')) || a.localeCompare(b));
}

/** A handle from a provider's node access: kubectl with the cluster's kubeconfig, kube-proxy's endpoints through node exec. */
export function makeClusterHandle(mode: Mode, provider: ProviderId, access: NodeAccess): ClusterHandle {
  const name = clusterName(mode);
  const kubeconfig = kubeconfigPath(mode);

  const pathFirst = access.pathFirst;
  const first: RunOptions = pathFirst ? { pathFirst } : {};
  const kubectl = (args: readonly string[], opts?: RunOptions) =>
    run('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeoutMs: TIMEOUTS.normal, ...first, ...opts });
  const nodeExec = (node: string, args: readonly string[], opts?: RunOptions) =>
    access.nodeExec(node, args, { timeoutMs: TIMEOUTS.normal, ...first, ...opts });

  return {
    mode,
    provider,
    name,
    kubeconfig,
    ...(pathFirst ? { pathFirst } : {}),
    kubectl,
    async kubectlJson<S extends z.ZodTypeAny>(args: readonly string[], schema: S, opts?: RunOptions): Promise<z.output<S>> {
      const r = await kubectl([...args, '-o', 'json'], opts);
      let json: unknown;
      try {
        json = JSON.parse(r.stdout);
      } catch {
        throw new DplabError(`kubectl ${args.join(' ')} did not print JSON.`, { details: r.stdout.slice(0, 2000) });
      }
      const parsed = schema.safeParse(json);
      if (!parsed.success) {
        throw new DplabError(`kubectl ${args.join(' ')} printed JSON of an unexpected shape: ${describeIssues(parsed.error)}.`, {
          details: r.stdout.slice(0, 2000),
          status: 502,
        });
      }
      return parsed.data;
    },
    nodes: (opts) => access.nodes(opts),
    nodeExec,
    nodeShell: (node) => access.nodeShell(node),
    nodeIp: (node, opts) => access.nodeIp(node, opts),
    async proxyMode(node, opts) {
      const r = await nodeExec(node, ['curl', '-sS', '--max-time', '5', `${KUBE_PROXY_METRICS}/proxyMode`], opts);
      return r.stdout.trim();
    },
    async metrics(node, opts) {
      const r = await nodeExec(node, ['curl', '-sS', '--max-time', '5', `${KUBE_PROXY_METRICS}/metrics`], opts);
      return r.stdout;
    },
    probeFromOutside: (node, port, path, opts) => access.probeFromOutside(node, port, path, opts),
  };
}

/** kind's nodes: containers on the `kind` Docker network, reached with `docker exec`. */
export function kindNodeAccess(mode: Mode): NodeAccess {
  const name = clusterName(mode);
  async function nodeIp(node: string, opts?: RunOptions): Promise<string> {
    const r = await run('docker', ['inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}', node], {
      timeoutMs: TIMEOUTS.quick,
      ...opts,
    });
    const ip = r.stdout
      .trim()
      .split(/\s+/)
      .find((s) => /^\d+\.\d+\.\d+\.\d+$/.test(s));
    if (!ip) throw new DplabError(`Node ${node} has no IPv4 address on a Docker network.`, { details: r.stdout, status: 409 });
    return ip;
  }
  return {
    async nodes(opts) {
      const r = await run('kind', ['get', 'nodes', '--name', name], { timeoutMs: TIMEOUTS.quick, ...opts });
      const list = r.stdout
        .split('\n')
        .map((s) => s.trim())
        .filter(Boolean);
      if (list.length === 0)
        throw new DplabError(`Cluster ${name} has no nodes.`, { fix: `Start it with \`dplab up ${mode}\`.`, status: 409 });
      return sortNodes(list);
    },
    nodeExec: (node, args, opts) => nodeRunner(node).run(args, opts),
    nodeShell: (node) => ['docker', 'exec', '-it', node, 'bash'],
    nodeIp,
    async probeFromOutside(node, port, path, opts) {
      const ip = await nodeIp(node, opts);
      return probeUrl(`http://${ip}:${port}${path}`, opts);
    },
  };
}
