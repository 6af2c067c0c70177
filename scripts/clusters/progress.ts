/** One provisioning run's progress, and per-action status objects that can be ended twice. */
import type { ClusterEvent } from './events.ts';
import type { Mode } from '../catalogue/modes.ts';
import type { ActionProgress, ErrorJson, Progress } from './status-types.ts';

export function newProgress(runId: string, actions: readonly { id: string; title: string }[]): Progress {
  return { runId, startedAt: Date.now(), actions: actions.map((a) => ({ id: a.id, title: a.title, state: 'pending' })), notes: [] };
}

/**
 * The status of one running action. `end` may be called again from a `finally` after a
 * success or failure was already recorded; only the first call counts (as in kind's cli status).
 */
export class ActionStatus {
  #ended = false;

  constructor(
    private readonly entry: ActionProgress,
    private readonly mode: Mode,
    private readonly runId: string,
    private readonly emit: (e: ClusterEvent) => void,
  ) {}

  start(): void {
    this.entry.state = 'running';
    this.entry.startedAt = Date.now();
    this.#emitPhase('start', this.entry.startedAt);
  }

  end(ok: boolean, error?: ErrorJson): void {
    if (this.#ended) return;
    this.#ended = true;
    this.entry.state = ok ? 'done' : 'failed';
    this.entry.endedAt = Date.now();
    this.#emitPhase(ok ? 'end' : 'fail', this.entry.endedAt, {
      elapsedMs: this.entry.endedAt - (this.entry.startedAt ?? this.entry.endedAt),
      error,
    });
  }

  #emitPhase(phase: 'start' | 'end' | 'fail', at: number, extra: { elapsedMs?: number; error?: ErrorJson } = {}): void {
    this.emit({ type: 'action', mode: this.mode, runId: this.runId, id: this.entry.id, title: this.entry.title, phase, at, ...extra });
  }
}
