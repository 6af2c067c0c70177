/**
 * A node's rules for one Service, read from a chosen node and parsed into the dataplane model,
 * for checks that need more than `serviceRules` compares (the chain a ClusterIP jumps to, the
 * probabilities, the IPVS scheduler, affinity). Same observation shape as rules.ts, so recorded
 * files look alike; the node is picked by role because kind names nodes `<cluster>-worker`, …
 */
import type { DataplaneModel, Frontend, ParseOptions } from '../../dataplane/model.ts';
import { gatherNodeCommand, IN_CLUSTER_COMMAND_TIMEOUT_MS, observeCommand, type CommandObservation } from './command.ts';
import { fact, fail } from './facts.ts';
import { firstItem, getByName, kubeListSchema, type KubeObject } from './kube.ts';
import { agentPodOn, execInAgentPod, RULE_DUMPS } from '../../dataplane/read-commands.ts';
import type { Agent } from '../../catalogue/modes.ts';
import type { ParseRules, RulesObservation } from './rules.ts';
import type { EvalContext, GatherContext, Verdict } from './types.ts';

export type NodeRole = 'control-plane' | 'worker' | 'worker2';

/** The node container with that role (`dplab-iptables-worker`), or the first node when absent. */
export async function pickNode(ctx: GatherContext, role: NodeRole): Promise<string> {
  const nodes = await ctx.cluster.nodes({ signal: ctx.signal });
  return nodes.find((n) => n.endsWith(`-${role}`)) ?? nodes[0];
}

/**
 * Dump the mode's rules on a node: inside the node for kube-proxy's modes, in the cilium agent
 * running on that node for Cilium (each agent keeps its own node's tables: with Local policy
 * they differ from node to node).
 */
export async function gatherNodeRules(
  ctx: GatherContext,
  service: string,
  node: string,
  command?: readonly string[],
): Promise<RulesObservation> {
  const dump = RULE_DUMPS[ctx.mode];
  const argv = command ?? dump.command;
  const [out, services] = await Promise.all([
    dump.agent ? gatherAgentCommand(ctx, dump.agent, node, argv) : gatherNodeCommand(ctx, node, argv),
    getByName(ctx, 'services', service),
  ]);
  return { format: dump.format, node, dump: out, services };
}

/** `kubectl exec` into the agent's container of its pod on `node`; no such pod is an observation (exit code 1), not an error. */
async function gatherAgentCommand(ctx: GatherContext, agent: Agent, node: string, command: readonly string[]): Promise<CommandObservation> {
  const pods = await ctx.cluster.kubectlJson(agentPodOn(agent, node), kubeListSchema, { signal: ctx.signal });
  const pod = firstItem(pods)?.metadata?.name;
  if (!pod) return { exitCode: 1, stdout: '', stderr: `no ${agent.daemonSet} agent pod (${agent.podLabel}) runs on ${node}` };
  return observeCommand(() =>
    ctx.cluster.kubectl(execInAgentPod(agent, pod, command), {
      signal: ctx.signal,
      timeoutMs: IN_CLUSTER_COMMAND_TIMEOUT_MS,
    }),
  );
}

export interface ServiceFrontend {
  /** `<namespace>/<service>`, as kube-proxy writes it into comments and chain names. */
  key: string;
  service: KubeObject | undefined;
  clusterIP: string | undefined;
  model: DataplaneModel;
  /** The ClusterIP frontend of the Service's first port, when the node has one. */
  frontend: Frontend | undefined;
}

/**
 * Parse the dump and find the Service's ClusterIP frontend. Returns a failing verdict when there
 * is nothing to look at yet (no Service, or the dump could not be read).
 */
export function serviceFrontend(
  parse: ParseRules,
  service: string,
  obs: RulesObservation,
  ctx: EvalContext,
  opts: ParseOptions = {},
): ServiceFrontend | Verdict {
  return findServiceFrontend(
    parse,
    service,
    obs,
    ctx,
    opts,
    (f, svc) => f.type === 'ClusterIP' && (!svc.clusterIP || f.ip === svc.clusterIP),
  );
}

/**
 * The same for the Service's NodePort (its first port's): `frontend` is the NodePort frontend on
 * that node (kube-proxy's rules and Cilium list it once, on every local address), when it has one.
 */
export function nodePortFrontend(
  parse: ParseRules,
  service: string,
  obs: RulesObservation,
  ctx: EvalContext,
): (ServiceFrontend & { nodePort: number | undefined }) | Verdict {
  const nodePort: number | undefined = firstItem(obs.services)?.spec?.ports?.[0]?.nodePort;
  const found = findServiceFrontend(parse, service, obs, ctx, {}, (f) => f.type === 'NodePort' && f.port === nodePort);
  return isVerdict(found) ? found : { ...found, nodePort };
}

function findServiceFrontend(
  parse: ParseRules,
  service: string,
  obs: RulesObservation,
  ctx: EvalContext,
  opts: ParseOptions,
  pick: (f: Frontend, svc: { clusterIP: string | undefined }) => boolean,
): ServiceFrontend | Verdict {
  const svc = firstItem(obs.services);
  const key = `${ctx.namespace}/${service}`;
  if (!svc)
    return fail(`There is no Service \`${service}\` in namespace \`${ctx.namespace}\`: reset the lab to create it again.`, [
      fact(`Service ${service}`, 'exists', 'not found', false),
    ]);
  if (obs.dump.exitCode !== 0) {
    return fail(`Could not read the rules on ${obs.node} (exit code ${obs.dump.exitCode}).`, [
      fact(`${obs.format} on ${obs.node}`, 'readable', obs.dump.stderr.trim() || 'failed', false),
    ]);
  }
  const clusterIP: string | undefined = svc.spec?.clusterIP;
  const names: Record<string, string> = {};
  for (const p of (svc.spec?.ports ?? []) as { port: number }[]) if (clusterIP) names[`${clusterIP}:${p.port}`] = key;
  const model = parse(obs.format, obs.dump.stdout, { names, ...opts });
  const frontend = model.services
    .filter((s) => s.service === key || s.service?.startsWith(`${key}:`))
    .flatMap((s) => s.frontends)
    .find((f) => pick(f, { clusterIP }));
  return { key, service: svc, clusterIP, model, frontend };
}

export function isVerdict(v: unknown): v is Verdict {
  return typeof v === 'object' && v !== null && 'status' in v && 'facts' in v;
}

/** The chain (or map-target chain) where the Service's backend is chosen: the last step of the path. */
export function balancingChain(f: Frontend): string | undefined {
  return f.path[f.path.length - 1];
}
