/**
 * Reading a running lab cluster's dataplane: dump one node's rules in the mode's own format
 * (RULE_DUMPS, the same table the lab checks use), name IPVS / Cilium entries from the cluster's
 * Services, and parse it into the model. A cluster that is not there is a clear 409/503 with the
 * fix, never a crash.
 */
import type { z } from 'zod';
import { type ClusterHandle } from '../clusters/handle.ts';
import { clusterHandle } from '../clusters/providers.ts';
import { kubeListSchema, listOf, namespacedObjectSchema, type KubeObject } from '../clusters/kube-objects.ts';
import { MODE_INFO, type Agent, type Mode } from '../catalogue/modes.ts';
import { allOrCancel, CommandError, type RunOptions } from '../base/exec.ts';
import { DplabError } from '../base/errors.ts';
import { clusterAbsent, describeClusterError } from '../clusters/cluster-errors.ts';
import { explainView, servicesIn, type ExplainResponse } from './explain-view.ts';
import { parse, ParseError, type DataplaneModel, type Format } from './index.ts';
import { agentPodOn, execInAgentPod, RULE_DUMPS } from './read-commands.ts';

/** Dumping a node's rules is quick even with thousands of Services; a slower answer means trouble. */
const LIVE_READ_TIMEOUT_MS = 30_000;

export interface LiveOptions {
  /** Node name as `kind get nodes` prints it; default the first worker. */
  node?: string;
  signal?: AbortSignal;
  /** Tests pass their own; default clusterHandle(mode). */
  cluster?: ClusterHandle;
}

export interface LiveDataplane {
  mode: Mode;
  node: string;
  /** Every node of the cluster, control plane first. */
  nodes: string[];
  format: Format;
  model: DataplaneModel;
  /** The tool output as read. */
  raw: string;
  /** The cluster's Services (`kubectl get services -A`), for "does it exist / is it headless". */
  services: KubeService[];
}

/** A Service as `kubectl get services -A` lists it. */
export type KubeService = z.infer<typeof namespacedObjectSchema>;
export type KubeNode = KubeObject;

const NODE_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** The first worker: kube-proxy's rules are the same on every node, but pods (and Local policy) live on workers. */
export function defaultNode(nodes: readonly string[]): string {
  return nodes.find((n) => !n.endsWith('-control-plane')) ?? nodes[0];
}

export async function readDataplane(mode: Mode, opts: LiveOptions = {}): Promise<LiveDataplane> {
  const cluster = opts.cluster ?? clusterHandle(mode);
  if (opts.node !== undefined && !NODE_NAME.test(opts.node))
    throw new DplabError(`"${opts.node.slice(0, 80)}" is not a node name.`, { status: 400 });
  const absent = clusterAbsent(cluster);
  if (absent) throw new DplabError(absent.message, { fix: absent.fix, status: 409 });
  const ro: RunOptions = { signal: opts.signal, timeoutMs: LIVE_READ_TIMEOUT_MS };
  try {
    const nodes = await cluster.nodes(ro);
    const node = opts.node ?? defaultNode(nodes);
    if (!nodes.includes(node))
      throw new DplabError(`Unknown node "${node}" in ${cluster.name}. Known: ${nodes.join(', ')}.`, { status: 404 });
    const dump = RULE_DUMPS[mode];
    const [raw, services, kubeNodes] = await allOrCancel<[string, KubeService[], KubeNode[]]>(opts.signal, [
      (signal) => dumpRules(cluster, node, { ...ro, signal }),
      (signal) =>
        cluster.kubectlJson(['get', 'services', '-A'], listOf(namespacedObjectSchema), { ...ro, signal }).then((l) => l.items ?? []),
      (signal) => cluster.kubectlJson(['get', 'nodes'], kubeListSchema, { ...ro, signal }).then((l) => l.items ?? []),
    ]);
    let model: DataplaneModel;
    try {
      // The cluster's own ClusterIPs say which virtual servers are ClusterIPs (IPVS does not);
      // the mode's Service subnet covers any created between the two reads.
      model = parse(dump.format, raw, {
        names: serviceNames(services, kubeNodes),
        clusterIPs: clusterIPsOf(services),
        serviceCidr: MODE_INFO[mode].serviceSubnet,
      });
    } catch (err) {
      if (!(err instanceof ParseError)) throw err;
      throw new DplabError(`The ${dump.format} output of ${node} is not what the parser expects.`, {
        details: err.message,
        fix: `Please report it with the output of \`${dump.command.join(' ')}\`${dump.agent ? ` in the ${dump.agent.daemonSet} agent` : ''} on ${node}.`,
        status: 502,
      });
    }
    return { mode, node, nodes, format: dump.format, model, raw, services };
  } catch (err) {
    throw liveError(err, mode);
  }
}

/** One Service of a live read, in the explorer's response shape; 404 says why it is absent. */
export async function explainLive(mode: Mode, service: string, opts: LiveOptions = {}): Promise<ExplainResponse> {
  const live = await readDataplane(mode, opts);
  const found = explainView(live.model, service, { source: 'live', mode, node: live.node, nodes: live.nodes });
  if (found) return found;
  throw notOnNode(live, service);
}

async function dumpRules(cluster: ClusterHandle, node: string, ro: RunOptions): Promise<string> {
  const dump = RULE_DUMPS[cluster.mode];
  if (!dump.agent) return (await cluster.nodeExec(node, dump.command, ro)).stdout;
  // An agent keeps its tables itself; the agent on *this* node, so the node choice matters.
  const pod = await agentPodName(cluster, dump.agent, node, ro);
  return (await cluster.kubectl(execInAgentPod(dump.agent, pod, dump.command), ro)).stdout;
}

/** The name of the agent's pod on `node`; a clear 409 when none runs there. */
export async function agentPodName(cluster: ClusterHandle, agent: Agent, node: string, ro: RunOptions): Promise<string> {
  const pods = await cluster.kubectlJson(agentPodOn(agent, node), kubeListSchema, ro);
  const pod = pods.items?.[0]?.metadata?.name;
  if (!pod) {
    throw new DplabError(`No ${agent.daemonSet} agent pod runs on ${node}.`, {
      fix: `Check \`kubectl -n ${agent.namespace} get pods -l ${agent.podLabel} -o wide\`; if ${agent.name} is broken, recreate the cluster (\`dplab down ${cluster.mode}\`, then \`dplab up ${cluster.mode}\`).`,
      status: 409,
    });
  }
  return pod;
}

/** Every ClusterIP the API server has allocated (both families on dual-stack Services). */
function clusterIPsOf(services: readonly KubeService[]): string[] {
  return services
    .flatMap((s) => s.spec?.clusterIPs ?? (s.spec?.clusterIP ? [s.spec.clusterIP] : []))
    .filter((ip) => ip !== 'None' && ip !== '');
}

/**
 * IPVS and Cilium text do not name Services: map every address a Service answers on
 * ("TCP/10.96.45.112:80", node addresses for NodePorts) to `ns/name[:port]`.
 */
export function serviceNames(services: readonly KubeService[], nodes: readonly KubeNode[]): Record<string, string> {
  const nodeIps = [
    '0.0.0.0',
    ...nodes.flatMap((n) => (n.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address)),
  ];
  const names: Record<string, string> = {};
  for (const svc of services) {
    const spec = svc.spec ?? {};
    const ips = [
      ...(spec.clusterIPs ?? (spec.clusterIP ? [spec.clusterIP] : [])),
      ...(spec.externalIPs ?? []),
      ...(svc.status?.loadBalancer?.ingress ?? []).flatMap((i) => (i.ip ? [i.ip] : [])),
    ].filter((ip) => ip && ip !== 'None');
    if (ips.length === 0) continue;
    for (const p of spec.ports ?? []) {
      const name = `${svc.metadata.namespace}/${svc.metadata.name}${p.name ? `:${p.name}` : ''}`;
      const proto = (p.protocol ?? 'TCP').toUpperCase();
      for (const ip of ips) names[`${proto}/${ip}:${p.port}`] = name;
      if (p.nodePort) for (const ip of nodeIps) names[`${proto}/${ip}:${p.nodePort}`] = name;
    }
  }
  return names;
}

function notOnNode(live: LiveDataplane, service: string): DplabError {
  const [ns, name] = service.split('/');
  const svc = live.services.find((s) => s.metadata.namespace === ns && s.metadata.name === name);
  const present = servicesIn(live.model);
  if (!svc) {
    const inNs = live.services.filter((s) => s.metadata.namespace === ns).map((s) => `${ns}/${s.metadata.name}`);
    return new DplabError(`Service ${service} does not exist in the ${live.mode} cluster.`, {
      fix: inNs.length
        ? `Services in ${ns}: ${inNs.join(', ')}.`
        : `There is no Service in namespace ${ns}; create it first (the lab's steps say how).`,
      status: 404,
    });
  }
  if (svc.spec?.clusterIP === 'None') {
    return new DplabError(`Service ${service} is headless (clusterIP: None), so the dataplane has no entry for it.`, {
      fix: 'Clients resolve a headless Service to the pod IPs through DNS and connect to a pod directly; nothing on the node translates the address.',
      status: 404,
    });
  }
  return new DplabError(`Service ${service} has no ${live.format} entries on ${live.node} yet.`, {
    fix: 'The proxy writes rules a moment after a Service changes; press Refresh in a few seconds.',
    details: `Services with entries on ${live.node}: ${present.join(', ') || 'none'}.`,
    status: 404,
  });
}

/** Infrastructure failures in the learner's words (cluster-errors.ts decides the wording). */
function liveError(err: unknown, mode: Mode): unknown {
  if (!(err instanceof CommandError)) return err;
  const p = describeClusterError(err, mode, 'the dataplane explorer', false);
  // A missing tool's message names only the tool; say what it stopped.
  if (err.kind === 'tool-missing') p.message = `Cannot read the ${mode} cluster: ${p.message}`;
  const status =
    err.kind === 'cluster-missing' ? 409 : err.kind === 'timeout' ? 504 : err.kind === 'aborted' ? 499 : err.kind === 'failed' ? 502 : 503;
  return new DplabError(p.message, { fix: p.fix, details: p.details, status, cause: err });
}
