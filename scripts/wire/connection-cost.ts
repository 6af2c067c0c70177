/**
 * The cost of a new connection, recorded on real kind clusters (test/bench/connection-cost.ts
 * writes labs/scale-compare/recorded/connection-cost.json): per mode, at each number of generated
 * Services, the node's rule or entry count and the median and p90 time of a new TCP connection to
 * a ClusterIP. The lab page and the comparing lesson chart it, so a learner without Docker sees
 * figures a real cluster gave; a mode not recorded yet says so instead of carrying figures.
 */
import { z } from './zod.ts';
import { modeSchema } from './mode-schema.ts';

const count = () => z.number().check(z.int(), z.minimum(0));

/** One size: what the node held and what a connection cost there. */
const connectionPointSchema = z.object({
  /** Generated Services (make-services.sh), beside the system's and the lab's own. */
  services: count(),
  /** The node's rules or entries, counted as count.sh counts them. */
  entries: count(),
  /** The Service timed, `ns/name`. */
  target: z.string(),
  samples: count(),
  /** Connects that failed (not in the samples). */
  failed: count(),
  medianUs: z.number().check(z.minimum(0)),
  p90Us: z.number().check(z.minimum(0)),
  /** iptables: KUBE-SERVICES rules ahead of the timed Service's rule, and in the chain. */
  ahead: z.optional(count()),
  rulesInChain: z.optional(count()),
  /** iptables: the same timing to the Service whose rule came first, the control. */
  first: z.optional(z.object({ target: z.string(), ahead: count(), medianUs: z.number(), p90Us: z.number(), samples: count() })),
  /** Seconds from creating the Services to a dataplane that held still. */
  settledSeconds: z.number().check(z.minimum(0)),
  /** ISO time of the measurement. */
  at: z.string(),
});
export type ConnectionPoint = z.infer<typeof connectionPointSchema>;

const recordedModeSchema = z.object({
  mode: modeSchema,
  recorded: z.literal(true),
  /** What the entry count counts on this mode, in the learner's words. */
  entriesLabel: z.string(),
  /** The node the connections came from. */
  node: z.string(),
  /** Wall time of this mode's whole recording: cluster up, Services, waits, measurements. */
  seconds: z.number(),
  points: z.array(connectionPointSchema).check(z.minLength(1)),
  /** Why the recording stopped short of the largest size, when it did (what was measured there). */
  note: z.optional(z.string().check(z.minLength(1))),
});

const notRecordedSchema = z.object({
  mode: modeSchema,
  recorded: z.literal(false),
  /** Why not, and how to record it. */
  note: z.string().check(z.minLength(1)),
});

export const connectionCostSchema = z.object({
  /** ISO date of the latest measurement in the file. */
  date: z.string(),
  /** The machine, in words (`2 cores of …, 23 GiB, kernel …`). */
  machine: z.string(),
  versions: z.object({ kind: z.string(), kubernetes: z.string(), cilium: z.string() }),
  /** Timed connects per point, after warmUp untimed ones. */
  samples: count(),
  warmUp: count(),
  modes: z.array(z.discriminatedUnion('recorded', [recordedModeSchema, notRecordedSchema])),
});
export type ConnectionCost = z.infer<typeof connectionCostSchema>;
