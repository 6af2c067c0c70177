/** Cluster status and progress (GET /api/clusters…) and the event stream (SSE /api/clusters/events). */
import { z } from './zod.ts';
import { errorJsonSchema } from './errors.ts';
import { modeSchema } from './mode-schema.ts';

export const clusterStateSchema = z.enum(['absent', 'provisioning', 'ready', 'broken']);
export type ClusterState = z.infer<typeof clusterStateSchema>;

const actionStateSchema = z.enum(['pending', 'running', 'done', 'failed', 'skipped']);

const actionProgressSchema = z.object({
  id: z.string(),
  title: z.string(),
  state: actionStateSchema,
  startedAt: z.optional(z.number()),
  endedAt: z.optional(z.number()),
});
export type ActionProgress = z.infer<typeof actionProgressSchema>;

const progressSchema = z.object({
  runId: z.string(),
  startedAt: z.number(),
  /** Set when the run finished (success or failure). */
  endedAt: z.optional(z.number()),
  actions: z.array(actionProgressSchema),
  /** Informational lines (skipped images, deleting a leftover cluster). */
  notes: z.array(z.string()),
});
export type Progress = z.infer<typeof progressSchema>;

export const clusterStatusSchema = z.object({
  mode: modeSchema,
  name: z.string(),
  state: clusterStateSchema,
  /** Node containers seen (0 when absent). */
  nodes: z.number(),
  /** Nodes reporting Ready. */
  readyNodes: z.number(),
  /** The dataplane this cluster runs (from the modes registry): iptables, ipvs, nftables, or cilium. */
  proxyMode: z.string(),
  /** Path of its kubeconfig (in the state folder). */
  kubeconfig: z.string(),
  /** Why it is broken, or why the last start failed. */
  error: z.optional(errorJsonSchema),
  /** The current or last provisioning run. */
  progress: z.optional(progressSchema),
  /** No cluster of this mode can start on this machine (Docker missing or down, kind missing); `error` says why and how to fix it. */
  blocked: z.optional(z.boolean()),
  /** The runner started it ahead, for a later lab, while the learner worked on another (POST /api/clusters/:mode/warm); set while it starts and once ready. */
  startedAhead: z.optional(z.boolean()),
});
export type ClusterStatus = z.infer<typeof clusterStatusSchema>;

/** GET /api/clusters, and the `snapshot` event that opens the stream. */
export const clusterListSchema = z.object({ clusters: z.array(clusterStatusSchema) });

/** POST /api/clusters/:mode/up: accepted; progress follows on the event stream. */
export const clusterStartSchema = z.object({ mode: modeSchema, state: z.literal('provisioning'), events: z.string() });

/** POST /api/clusters/:mode/warm: the page asks the runner to start this cluster ahead, for the next lab. */
export const clusterWarmRequestSchema = z.strictObject({
  /** The learner turned starting ahead off in this browser: the runner declines and says so (the page offers to turn it on again). */
  optedOut: z.optional(z.boolean()),
});

/** Why the runner did not start a cluster ahead (scripts/clusters/warm-decision.ts decides). */
const warmDeclineSchema = z.enum(['opted-out', 'off', 'seat', 'exists', 'busy', 'memory', 'host']);
export type WarmDecline = z.infer<typeof warmDeclineSchema>;

/** POST /api/clusters/:mode/warm's answer: 202 and warming (progress on the event stream), or 200 and declined, with one sentence why. */
export const clusterWarmSchema = z.discriminatedUnion('outcome', [
  z.object({ outcome: z.literal('warming'), mode: modeSchema, message: z.string(), events: z.string() }),
  z.object({ outcome: z.literal('declined'), mode: modeSchema, reason: warmDeclineSchema, message: z.string() }),
]);
export type ClusterWarm = z.infer<typeof clusterWarmSchema>;

const actionPhaseSchema = z.enum(['start', 'end', 'fail']);

export const clusterEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('status'), mode: modeSchema, status: clusterStatusSchema }),
  z.object({
    type: z.literal('action'),
    mode: modeSchema,
    runId: z.string(),
    id: z.string(),
    title: z.string(),
    phase: actionPhaseSchema,
    at: z.number(),
    elapsedMs: z.optional(z.number()),
    error: z.optional(errorJsonSchema),
  }),
  z.object({ type: z.literal('info'), mode: modeSchema, runId: z.string(), message: z.string(), at: z.number() }),
]);
export type ClusterEvent = z.infer<typeof clusterEventSchema>;

/** GET /api/clusters/:mode/nodes: the nodes a lab page offers as terminal tabs (none unless ready). */
export const clusterNodesSchema = z.object({ mode: modeSchema, nodes: z.array(z.string()) });
