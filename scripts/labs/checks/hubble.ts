/**
 * "Hubble saw these flows" (syllabus E4). Each Cilium agent keeps a ring buffer of the flows on
 * its own node, and its image ships the `hubble` CLI, which reads that buffer over the agent's
 * local socket. Asking every agent covers the whole cluster without needing Hubble Relay
 * (`cilium hubble enable`), which the learner may or may not have turned on.
 */
import { z } from 'zod';
import { commandObservationSchema, observeCommand } from './command.ts';
import { kubeListSchema } from './kube.ts';
import { CILIUM } from '../../catalogue/modes.ts';
import { execInAgentPod } from '../../dataplane/read-commands.ts';
import type { GatherContext } from './types.ts';

/** How far back each agent looks: enough for a learner's handful of requests. */
const HUBBLE_LAST = 500;

export const hubbleObservationSchema = z.object({
  agents: z.array(z.object({ pod: z.string(), node: z.string(), result: commandObservationSchema })),
});
export type HubbleObservation = z.infer<typeof hubbleObservationSchema>;

/** The fields of Hubble's flow JSON (observer.proto / flow.proto) the checks read. */
export interface Flow {
  time?: string;
  verdict?: string;
  drop_reason_desc?: string;
  Type?: string;
  node_name?: string;
  IP?: { source?: string; destination?: string };
  l4?: { TCP?: { source_port?: number; destination_port?: number }; UDP?: { source_port?: number; destination_port?: number } };
  source?: { namespace?: string; pod_name?: string; labels?: string[] };
  destination?: { namespace?: string; pod_name?: string; labels?: string[] };
  destination_service?: { name?: string; namespace?: string };
  traffic_direction?: string;
  is_reply?: boolean;
  l7?: { type?: string; http?: { code?: number; method?: string; url?: string } };
  event_type?: { type?: number; sub_type?: number };
  sock_xlate_point?: string;
  Summary?: string;
}

/** `hubble observe <filters> --last N -o json` in every agent. */
export async function gatherHubble(ctx: GatherContext, filters: readonly string[]): Promise<HubbleObservation> {
  const pods = await ctx.cluster.kubectlJson(['get', 'pods', '-n', CILIUM.namespace, '-l', CILIUM.podLabel], kubeListSchema, {
    signal: ctx.signal,
  });
  const running = (pods.items ?? []).filter((p) => p.status?.phase === 'Running');
  const agents = await Promise.all(
    running.map(async (p) => {
      const pod = p.metadata?.name ?? '?';
      const result = await observeCommand(() =>
        ctx.cluster.kubectl(execInAgentPod(CILIUM, pod, ['hubble', 'observe', ...filters, '--last', String(HUBBLE_LAST), '-o', 'json']), {
          signal: ctx.signal,
        }),
      );
      return { pod, node: String(p.spec?.nodeName ?? '?'), result };
    }),
  );
  return { agents };
}

/** One JSON object per line; each is a GetFlowsResponse (`{"flow": …}`) or, from older CLIs, the bare flow. */
function parseFlows(stdout: string): Flow[] {
  const flows: Flow[] = [];
  for (const line of stdout.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    try {
      const o = JSON.parse(t) as { flow?: Flow } & Flow;
      if (o.flow) flows.push(o.flow);
      else if (o.verdict || o.IP || o.source) flows.push(o);
    } catch {
      // A truncated last line (the agent was cut off) is not worth failing the check for.
    }
  }
  return flows;
}

/** Every agent's flows, newest last, plus which agents could not be asked and why. */
export function allFlows(obs: HubbleObservation): { flows: Flow[]; failed: string[] } {
  const flows: Flow[] = [];
  const failed: string[] = [];
  for (const a of obs.agents) {
    if (a.result.exitCode !== 0)
      failed.push(`${a.pod} on ${a.node}: ${a.result.stderr.trim().split('\n')[0] || `exit code ${a.result.exitCode}`}`);
    else flows.push(...parseFlows(a.result.stdout));
  }
  return { flows: flows.sort((x, y) => (x.time ?? '').localeCompare(y.time ?? '')), failed };
}

function endpoint(e: Flow['source'], ip: string | undefined): string {
  return e?.pod_name ? `${e.namespace}/${e.pod_name}` : (ip ?? '?');
}

/** A one-line summary in the spirit of `hubble observe`'s compact output. */
export function describeFlow(f: Flow): string {
  const port = f.l4?.TCP?.destination_port ?? f.l4?.UDP?.destination_port;
  const to =
    f.destination_service?.name && !f.destination?.pod_name
      ? `${f.destination_service.namespace}/${f.destination_service.name}`
      : endpoint(f.destination, f.IP?.destination);
  const http = f.l7?.http
    ? ` ${f.l7.type === 'RESPONSE' ? `${f.l7.http.code} ` : ''}${f.l7.http.method ?? ''} ${f.l7.http.url ?? ''}`.trimEnd()
    : '';
  const reason = f.verdict === 'DROPPED' && f.drop_reason_desc ? ` (${f.drop_reason_desc})` : '';
  return `${endpoint(f.source, f.IP?.source)} -> ${to}${port ? `:${port}` : ''} ${f.verdict ?? '?'}${reason}${f.Type === 'L7' ? ` L7${http}` : ''}`;
}
