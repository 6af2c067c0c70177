/**
 * "What the learner did changed": a check ran (check-log.ts) or progress was written
 * (progress.ts). The runner's activity stream (GET /api/activity/events) listens, so the
 * workshop portal's dashboard hears of a step the moment it passes instead of asking every seat.
 */
import { Emitter } from '../clusters/events.ts';

export const activityChanges = new Emitter<void>();
