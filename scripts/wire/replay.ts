/**
 * A step replayed from its recordings (GET /api/labs/:lab/steps/:step/replay?mode=…) and what
 * keeps a cluster from starting on this machine (GET /api/clusters/:mode/blocker): the lab page
 * offers the replay when no cluster can start here.
 */
import { z } from './zod.ts';
import { errorJsonSchema } from './errors.ts';
import { factSchema } from './checks.ts';
import { modeSchema } from './mode-schema.ts';

/** Where and on what a recording was made, as the page labels it. */
const recordingSourceSchema = z.object({
  provider: z.enum(['kind', 'sim']),
  /** One line: `kind v0.31.0 · Kubernetes v1.35.0 · kernel 6.18.44 · 2 Dec 2026`. */
  label: z.string(),
  /** ISO date of the recording. */
  date: z.string(),
  kubernetesVersion: z.string(),
  /** Every component the recording names, with its version (kernel, kube-proxy, CoreDNS, …). */
  components: z.record(z.string(), z.string()),
});
export type RecordingSource = z.infer<typeof recordingSourceSchema>;

/** What Check saw and said on one recording: evaluate run on its observations. */
const replayedCheckSchema = z.object({
  status: z.enum(['pass', 'fail']),
  message: z.string(),
  facts: z.array(factSchema),
  source: recordingSourceSchema,
});
export type ReplayedCheck = z.infer<typeof replayedCheckSchema>;

/** A command's output kept in the recording (curl's answers, a rule dump), shortened when long. */
const recordedOutputSchema = z.object({
  /** What printed it, e.g. `the client pod's requests` or `iptables-save on dplab-iptables-worker`. */
  label: z.string(),
  text: z.string(),
  /** Lines left out at the end (0 when whole). */
  omittedLines: z.number(),
});
export type RecordedOutput = z.infer<typeof recordedOutputSchema>;

export const stepReplaySchema = z.object({
  lab: z.string(),
  step: z.string(),
  mode: modeSchema,
  /** The step's solution for this mode: the commands the recording's cluster was brought to "solved" with. */
  commands: z.array(z.string()),
  /** What the real cluster printed, where the solved recording kept it. */
  outputs: z.array(recordedOutputSchema),
  /** Check before the step was done, and after. */
  unsolved: replayedCheckSchema,
  solved: replayedCheckSchema,
});
export type StepReplay = z.infer<typeof stepReplaySchema>;

/** Why no cluster of this mode can start here (Docker missing or down, kind missing), or null. */
export const clusterBlockerSchema = z.object({ mode: modeSchema, blocker: z.nullable(errorJsonSchema) });
export type ClusterBlocker = z.infer<typeof clusterBlockerSchema>;
