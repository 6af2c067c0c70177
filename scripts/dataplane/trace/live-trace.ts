/**
 * A trace on a running lab cluster: find the Service (and the client pod, if one is named), pick
 * the node, read its rules into the model, trace `count` requests sent from the pod (`kubectl
 * exec … curl`) or from the node itself (node exec), and read the packets against the model.
 * Everything on the node goes through the cluster handle's node exec.
 */
import { z } from 'zod';
import { agentOf, type Mode } from '../../catalogue/modes.ts';
import { CommandError, TIMEOUTS, type RunOptions } from '../../base/exec.ts';
import { DplabError } from '../../base/errors.ts';
import type { ClusterHandle } from '../../clusters/handle.ts';
import { clusterHandle } from '../../clusters/providers.ts';
import { kubeObjectSchema } from '../../clusters/kube-objects.ts';
import type { TraceRequest, TraceResult } from '../../wire/trace.ts';
import { isServiceRef } from '../explain-view.ts';
import { readDataplane, type KubeService } from '../live.ts';
import type { DataplaneModel } from '../model.ts';
import { findFrontend } from '../query.ts';
import { traceFlow, type Address, type TraceFlow } from './flow.ts';
import { TRACE_METHOD } from './methods.ts';
import { agentNode, clusterNode, type TraceNode } from './node.ts';
import { traceResult } from './result.ts';
import { runTrace } from './session.ts';
import { sweepNode } from './sweep.ts';

/** How long one request may take (curl's --max-time): a refused or dropped one must not hold the trace. */
const REQUEST_SECONDS = 2;
const DEFAULT_COUNT = 5;

export interface TraceOptions {
  signal?: AbortSignal;
  /** Tests pass their own; default clusterHandle(mode). */
  cluster?: ClusterHandle;
}

export async function traceLive(mode: Mode, req: TraceRequest, opts: TraceOptions = {}): Promise<TraceResult> {
  const method = TRACE_METHOD[mode];
  if (!method)
    throw new DplabError(`Tracing a request is not built for ${mode} mode yet.`, {
      fix: "Trace in the iptables, nftables or cilium cluster; `dplab explain` shows this mode's rules.",
      status: 501,
    });
  if (!isServiceRef(req.service))
    throw new DplabError(`"${req.service.slice(0, 80)}" is not a Service: give namespace/name, e.g. default/web.`, { status: 400 });
  if (req.from !== undefined && !isServiceRef(req.from))
    throw new DplabError(`"${req.from.slice(0, 80)}" is not a pod: give namespace/name, e.g. default/client.`, { status: 400 });
  const cluster = opts.cluster ?? clusterHandle(mode);
  const ro: RunOptions = { signal: opts.signal, timeoutMs: TIMEOUTS.quick };
  const pod = req.from ? await clientPod(cluster, req.from, ro) : null;
  if (pod && req.node && req.node !== pod.node)
    throw new DplabError(`Pod ${req.from} runs on ${pod.node}, not ${req.node}.`, {
      fix: `Trace on ${pod.node} (leave the node out): its packets meet the rules of the node it runs on.`,
      status: 400,
    });
  const live = await readDataplane(mode, { node: req.node ?? pod?.node, signal: opts.signal, cluster });
  const flow = traceFlow({
    ...(await target(cluster, live.node, live.services, req, ro)),
    client: pod?.ip ?? null,
  });
  const count = req.count ?? DEFAULT_COUNT;
  const session = await runTrace({
    method,
    node: traceNode(cluster, live.node),
    flow,
    backends: backendsOf(live.model, flow),
    send: (signal) => sendRequests(cluster, live.node, pod, flow, count, signal),
    expected: count,
    windowMs: (count * (REQUEST_SECONDS + 1) + 3) * 1000,
    signal: opts.signal,
  });
  return traceResult({ mode, node: live.node, method, flow, model: live.model, packets: session.packets, sent: session.sent });
}

/** Removes every trace rule or table a runner left on a node (or on every node). */
export async function sweepLive(
  mode: Mode,
  opts: TraceOptions & { node?: string } = {},
): Promise<Array<{ node: string; removed: string[] }>> {
  const method = TRACE_METHOD[mode];
  if (!method) return [];
  const cluster = opts.cluster ?? clusterHandle(mode);
  const nodes = await cluster.nodes({ signal: opts.signal, timeoutMs: TIMEOUTS.quick });
  if (opts.node && !nodes.includes(opts.node))
    throw new DplabError(`Unknown node "${opts.node.slice(0, 80)}" in ${cluster.name}. Known: ${nodes.join(', ')}.`, { status: 404 });
  const out = [];
  for (const node of opts.node ? [opts.node] : nodes) out.push({ node, removed: await sweepNode(traceNode(cluster, node), method) });
  return out;
}

/** Where a trace's commands run: where the mode's dataplane is read (the node, or the node's agent container). */
function traceNode(cluster: ClusterHandle, node: string): TraceNode {
  const agent = agentOf(cluster.mode);
  return agent ? agentNode(cluster, agent, node) : clusterNode(cluster, node);
}

/** Every backend the model gives the flow's frontend (its NodePort's, for a node address). */
function backendsOf(model: DataplaneModel, flow: TraceFlow): Address[] {
  const view = findFrontend(model, `${flow.ip}:${flow.port}/${flow.protocol.toUpperCase()}`);
  return (view?.frontends ?? []).flatMap((f) => f.backends.map((b) => ({ ip: b.ip, port: b.port })));
}

const podSchema = kubeObjectSchema;

async function clientPod(
  cluster: ClusterHandle,
  ref: string,
  ro: RunOptions,
): Promise<{ ns: string; name: string; ip: string; node: string }> {
  const [ns, name] = ref.split('/');
  let pod: z.infer<typeof podSchema>;
  try {
    pod = await cluster.kubectlJson(['-n', ns, 'get', 'pod', name], podSchema, ro);
  } catch (err) {
    if (err instanceof CommandError && /NotFound|not found/.test(err.stderr))
      throw new DplabError(`Pod ${ref} does not exist in the ${cluster.mode} cluster.`, {
        fix: `List the pods with \`kubectl -n ${ns} get pods\`; a lab's client pod is made by its setup.`,
        status: 404,
      });
    throw err;
  }
  const ip = pod.status?.podIP;
  const node = pod.spec?.nodeName;
  if (!ip || !node)
    throw new DplabError(`Pod ${ref} is not running yet (no address or node).`, {
      fix: `Wait for \`kubectl -n ${ns} get pod ${name}\` to say Running.`,
      status: 409,
    });
  return { ns, name, ip, node };
}

/** The Service's ClusterIP and port, or its NodePort on the node's own address. */
async function target(cluster: ClusterHandle, node: string, services: readonly KubeService[], req: TraceRequest, ro: RunOptions) {
  const [ns, name] = req.service.split('/');
  const svc = services.find((s) => s.metadata.namespace === ns && s.metadata.name === name);
  if (!svc)
    throw new DplabError(`Service ${req.service} does not exist in the ${cluster.mode} cluster.`, {
      fix: `List them with \`kubectl -n ${ns} get services\`.`,
      status: 404,
    });
  const ports = svc.spec?.ports ?? [];
  const port = req.port === undefined ? ports[0] : ports.find((p) => p.port === req.port);
  if (!port)
    throw new DplabError(`Service ${req.service} has no port ${req.port ?? ''}.`.replace(' .', '.'), {
      fix: `Its ports: ${ports.map((p) => p.port).join(', ') || 'none'}.`,
      status: 404,
    });
  const protocol = (port.protocol ?? 'TCP').toLowerCase();
  if (protocol !== 'tcp')
    throw new DplabError(`Only TCP requests can be sent for a trace yet (port ${port.port} is ${protocol}).`, { status: 400 });
  if (req.nodePort) {
    if (!port.nodePort)
      throw new DplabError(`Service ${req.service} has no NodePort on port ${port.port}.`, {
        fix: 'Trace its ClusterIP (leave --node-port out).',
        status: 400,
      });
    return { protocol, ip: await cluster.nodeIp(node, ro), port: port.nodePort };
  }
  const ip = svc.spec?.clusterIP;
  if (!ip || ip === 'None')
    throw new DplabError(`Service ${req.service} is headless (clusterIP: None): no rule translates it, so there is nothing to trace.`, {
      status: 400,
    });
  return { protocol, ip, port: port.port };
}

/** One curl per request (a new connection each, so a new choice of backend); a refused request still counts as sent. */
async function sendRequests(
  cluster: ClusterHandle,
  node: string,
  pod: { ns: string; name: string } | null,
  flow: TraceFlow,
  count: number,
  signal: AbortSignal,
): Promise<number> {
  const curl = ['curl', '-sS', '-o', '/dev/null', '--max-time', String(REQUEST_SECONDS), `http://${flow.ip}:${flow.port}/`];
  const ro: RunOptions = { signal, timeoutMs: TIMEOUTS.quick };
  for (let i = 0; i < count; i++) {
    try {
      if (pod) await cluster.kubectl(['-n', pod.ns, 'exec', pod.name, '--', ...curl], ro);
      else await cluster.nodeExec(node, curl, ro);
    } catch (err) {
      if (!(err instanceof CommandError) || err.kind !== 'failed') throw err;
    }
  }
  return count;
}
