/** The workshop portal's own API (`/portal/api/…`): joining, the learner's banner, the instructor's dashboard. */
import { z } from './zod.ts';
import { clusterStateSchema } from './clusters.ts';
import { modeSchema } from './mode-schema.ts';

/** POST /portal/api/join */
export const joinRequestSchema = z.object(
  {
    code: z
      .string('Enter the workshop code.')
      .check(z.minLength(1, 'Enter the workshop code.'), z.maxLength(40, 'A workshop code has at most 40 characters.')),
    /** Shown on the instructor's dashboard only. */
    name: z.string('Enter your name.').check(
      z.trim(),
      z.minLength(1, 'Enter your name.'),
      z.maxLength(40, 'A name of at most 40 characters, please.'),
      z.refine((n) => !/\p{Cc}/u.test(n), 'A name without control characters, please.'),
    ),
  },
  'Enter the code and your name.',
);

export const joinResponseSchema = z.object({
  /** The learner's own token: the page stores it as its runner token; the portal swaps it for the seat's. */
  token: z.string(),
  seat: z.string(),
  /** Where the learner's course starts (the workshop's lab). */
  start: z.string(),
});
export type JoinResponse = z.infer<typeof joinResponseSchema>;

/**
 * A header the portal sets on its own 502 when a seat's runner does not answer, so a learner's page
 * tells that apart from a 502 the runner itself sent (a failed `kubectl`, say).
 */
export const SEAT_UNREACHABLE_HEADER = 'x-dplab-seat-unreachable';

const seatPhaseSchema = z.enum(['pending', 'ready', 'failed', 'deleted']);

/** GET /portal/api/me: what a learner's page shows in its banner. */
export const learnerViewSchema = z.object({
  seat: z.string(),
  name: z.string(),
  phase: seatPhaseSchema,
  message: z.optional(z.string()),
  broadcast: z.optional(z.string()),
  ended: z.boolean(),
});
export type LearnerView = z.infer<typeof learnerViewSchema>;

const stepCellSchema = z.object({
  step: z.string(),
  status: z.enum(['passed', 'failing', 'not-started']),
  /** The last failing check's message. */
  message: z.optional(z.string()),
  failStreak: z.int().check(z.minimum(0)),
});
export type StepCell = z.infer<typeof stepCellSchema>;

const seatRowSchema = z.object({
  id: z.string(),
  learner: z.optional(z.string()),
  phase: seatPhaseSchema,
  message: z.optional(z.string()),
  clusters: z.array(z.object({ mode: modeSchema, state: clusterStateSchema })),
  steps: z.array(stepCellSchema),
  /** Why this learner looks stuck, or absent. */
  stuck: z.optional(z.string()),
  /** Epoch ms of the learner's last keystroke or action. */
  lastActiveAt: z.optional(z.number()),
  /** Epoch ms the dashboard's figures for this seat were read. */
  readAt: z.optional(z.number()),
});
export type SeatRow = z.infer<typeof seatRowSchema>;

/** GET /portal/api/state, and each `state` event of GET /portal/api/events. */
export const dashboardStateSchema = z.object({
  lab: z.object({ id: z.string(), title: z.string(), steps: z.array(z.object({ id: z.string(), title: z.string() })) }),
  code: z.string(),
  joinUrl: z.string(),
  broadcast: z.optional(z.string()),
  ended: z.boolean(),
  /** Seats being deleted by "End workshop". */
  ending: z.boolean(),
  seats: z.array(seatRowSchema),
});
export type DashboardState = z.infer<typeof dashboardStateSchema>;

/** POST /portal/api/broadcast */
export const broadcastRequestSchema = z.object({ message: z.string().check(z.maxLength(500)) });
