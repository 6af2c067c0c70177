/**
 * One workshop: its seats (made through a seat backend), who sits in which, what each seat's
 * runner reports, the broadcast message and the end of it all. The portal's HTTP side asks
 * here which seat a learner token names; the dashboard reads `state()` and listens to
 * `changes`.
 */
import { DplabError } from '../base/errors.ts';
import { Emitter } from '../clusters/events.ts';
import { generateToken, tokensEqual } from '../server/security.ts';
import type { Activity } from '../wire/activity.ts';
import type { ClusterState } from '../wire/clusters.ts';
import type { Mode } from '../wire/modes.ts';
import type { DashboardState, JoinResponse, LearnerView, SeatRow } from '../wire/portal.ts';
import { stepCells, stuckReason, type LabOutline } from './dashboard.ts';
import type { TokenBook } from './gate.ts';
import type { SeatBackend, SeatEndpoint, SeatStatus } from './seat-backend.ts';
import { SeatClient } from './seat-client.ts';
import type { SeatRecord, WorkshopStore } from './workshop-store.ts';

export const WORKSHOP_TIMING = {
  /** The watcher wakes this often. */
  tickMs: 500,
  /**
   * Each seat's progress and checks are read this often while its activity stream is not
   * connected (and right after a check passes through us); a connected stream pushes them, and
   * a broken one is opened again after this long.
   */
  activityMs: 2_000,
  /** Each seat's cluster states are read this often without a stream (each read lists kind clusters and asks each cluster for its nodes). */
  clustersMs: 15_000,
  /** With a stream, everything is read once this often anyway, in case an event was lost. */
  reconcileMs: 60_000,
  /** Seats deleted at once by "End workshop" (each runs `kind delete` per cluster). */
  endConcurrency: 4,
};
export type WorkshopTiming = typeof WORKSHOP_TIMING;

export interface WorkshopOptions {
  backend: SeatBackend;
  tokens: TokenBook;
  lab: LabOutline;
  code: string;
  /** Modes each seat's clusters are brought up in before a learner arrives. */
  warm: readonly Mode[];
  maxSeats: number;
  /** No keystroke or action for this long counts as stuck. */
  idleMs: number;
  /** The learners' link, shown on the dashboard. */
  joinUrl: string;
  now?: () => number;
  timing?: Partial<WorkshopTiming>;
  /** Where each seat's runner token and learner are kept, so a portal started again takes them back (restore()); absent: nothing is kept. */
  store?: WorkshopStore;
}

interface Seat {
  id: string;
  runnerToken: string;
  status: SeatStatus;
  learner?: { name: string; joinedAt: number; client?: string; token?: string };
  lastActiveAt?: number;
  activity?: Activity;
  clusters: { mode: Mode; state: ClusterState }[];
  readAt?: number;
  nextActivity: number;
  nextClusters: number;
  busy: boolean;
  error?: string;
  /** The seat's activity stream while it is open; `live` once its first event came. */
  stream?: { controller: AbortController; live: boolean };
  /** When a stream may be opened (again). */
  nextStream: number;
  /** Why a seat an earlier portal left was set aside (its saved state does not read): kept as it is, never handed out, removable. */
  setAside?: string;
}

/** What restore() did with the seats an earlier portal left. */
export interface Restored {
  /** Taken back: their learners' links work again, their runners as they were or started again. */
  resumed: string[];
  /** Their saved state does not read: kept on disk untouched, shown on the dashboard, for the instructor to remove. */
  setAside: { id: string; message: string }[];
  /** Seats of which nothing was saved (nobody could reach them again): deleted, clusters first. */
  removed: string[];
  /** Of those, the ones that would not go (their ids stay out of this workshop's numbering). */
  failed: { id: string; message: string }[];
}

export class Workshop {
  readonly changes = new Emitter<void>();
  readonly #seats = new Map<string, Seat>();
  readonly #timer: NodeJS.Timeout;
  readonly #timing: WorkshopTiming;
  readonly #now: () => number;
  #broadcast: string | undefined;
  #ended = false;
  #ending = false;
  #serial = 0;
  #changePending = false;
  /** Ids of seats an earlier portal left that would not go: never handed out again. */
  readonly #reserved = new Set<string>();

  constructor(private readonly opts: WorkshopOptions) {
    this.#timing = { ...WORKSHOP_TIMING, ...opts.timing };
    this.#now = opts.now ?? Date.now;
    this.#timer = setInterval(() => this.#tick(), this.#timing.tickMs);
    this.#timer.unref();
  }

  get lab(): LabOutline {
    return this.opts.lab;
  }

  /**
   * Seats the backend had before this workshop made any: an earlier portal's, left by a crash,
   * a kill or a second Ctrl-C. Each one whose record the store kept is taken back with its runner
   * token, learner and learner token (their page reconnects by itself); one whose record does
   * not read is set aside, untouched; one with no record at all nobody could reach again, so it
   * is deleted (clusters first), and any that will not go keep their ids out of the numbering.
   */
  async restore(): Promise<Restored> {
    const listed = (await this.opts.backend.list()).map((s) => s.id).filter((id) => !this.#seats.has(id));
    const store = this.opts.store;
    // A record whose seat is gone (its folder removed by hand) has nothing left to take back.
    for (const id of store?.seatIds() ?? []) if (!listed.includes(id) && store!.readSeat(id).ok) store!.removeSeat(id);
    const out: Restored = { resumed: [], setAside: [], removed: [], failed: [] };
    const orphans: string[] = [];
    const resumes: Promise<void>[] = [];
    for (const id of listed) {
      const stored = store ? store.readSeat(id) : ({ ok: false, missing: true } as const);
      if (stored.ok) {
        resumes.push(this.#resume(stored.record));
        out.resumed.push(id);
      } else if (!stored.missing) {
        const message = `Set aside after a restart: its saved state does not read (${stored.problem.slice(0, 300)}); its folder is kept as it was. Remove deletes it.`;
        this.#seats.set(id, { ...this.#blankSeat(id, ''), status: { id, phase: 'failed', message }, setAside: message });
        out.setAside.push({ id, message });
      } else orphans.push(id);
    }
    await Promise.all(resumes);
    const worker = async () => {
      for (let id = orphans.shift(); id; id = orphans.shift()) {
        try {
          await this.opts.backend.delete(id);
          out.removed.push(id);
        } catch (err) {
          this.#reserved.add(id);
          out.failed.push({ id, message: err instanceof Error ? err.message : String(err) });
        }
      }
    };
    await Promise.all(Array.from({ length: this.#timing.endConcurrency }, worker));
    out.removed.sort();
    this.#changed();
    return out;
  }

  async #resume(record: SeatRecord): Promise<void> {
    const { id, runnerToken, learner } = record;
    const seat = this.#blankSeat(id, runnerToken);
    seat.status = { id, phase: 'pending', message: 'Taking the seat back after a restart…' };
    if (learner) {
      seat.learner = learner;
      seat.lastActiveAt = this.#now();
      this.opts.tokens.addLearner(learner.token, id);
    }
    this.#seats.set(id, seat);
    try {
      seat.status = await this.opts.backend.resume({ id, runnerToken, warm: [] });
    } catch (err) {
      seat.status = { id, phase: 'failed', message: err instanceof Error ? err.message : String(err) };
    }
  }

  #blankSeat(id: string, runnerToken: string): Seat {
    return {
      id,
      runnerToken,
      status: { id, phase: 'pending' },
      clusters: [],
      nextActivity: 0,
      nextClusters: 0,
      busy: false,
      nextStream: 0,
    };
  }

  /** Keep what a restarted portal needs of this seat (its runner token, its learner). */
  #save(seat: Seat): void {
    const learner = seat.learner?.token ? { ...seat.learner, token: seat.learner.token } : undefined;
    this.opts.store?.writeSeat({ id: seat.id, runnerToken: seat.runnerToken, ...(learner ? { learner } : {}) });
  }

  /**
   * Have `count` seats before the learners arrive (a hot start), counting the seats a restart took
   * back (a portal started again with `--seats 12` does not make 12 more); returns once each new
   * one was accepted by the backend.
   */
  async prepare(count: number): Promise<void> {
    const room = Math.max(0, Math.min(count, this.opts.maxSeats) - this.#seats.size);
    await Promise.all(Array.from({ length: room }, () => this.#newSeat()));
  }

  async #newSeat(): Promise<Seat> {
    if (this.#ended || this.#ending) throw new DplabError('This workshop has ended.', { status: 410 });
    let id: string;
    do id = `s${String(++this.#serial).padStart(2, '0')}`;
    while (this.#seats.has(id) || this.#reserved.has(id));
    const seat: Seat = { ...this.#blankSeat(id, generateToken()), status: { id, phase: 'pending', message: 'Asking for a seat…' } };
    this.#seats.set(id, seat);
    // Saved before the backend hears of it: a seat that exists is a seat a restart can take back.
    this.#save(seat);
    this.#changed();
    try {
      seat.status = await this.opts.backend.create({ id, runnerToken: seat.runnerToken, warm: this.opts.warm });
    } catch (err) {
      seat.status = { id, phase: 'failed', message: err instanceof Error ? err.message : String(err) };
    }
    this.#changed();
    return seat;
  }

  /** Is `code` this workshop's code? */
  codeMatches(code: string): boolean {
    return tokensEqual(code.trim().toUpperCase(), this.opts.code);
  }

  /**
   * A learner arrives with the workshop code and a name: a free seat (ready first), or a new one
   * while there is room. With `client`, that client (client-source.ts) holds at most `share` seats.
   */
  async join(code: string, name: string, limit?: { client: string; share: number }): Promise<JoinResponse> {
    if (this.#ended || this.#ending) throw new DplabError('This workshop has ended.', { status: 410 });
    if (!this.codeMatches(code)) throw new DplabError('That is not this workshop’s code.', { status: 401 });
    if (limit && [...this.#seats.values()].filter((s) => s.learner?.client === limit.client).length >= limit.share)
      throw new DplabError(
        `This browser already holds ${limit.share} seat${limit.share === 1 ? '' : 's'} of this workshop; ask your instructor for another.`,
        { status: 429 },
      );
    const free = [...this.#seats.values()].filter((s) => !s.learner && (s.status.phase === 'ready' || s.status.phase === 'pending'));
    let seat = free.find((s) => s.status.phase === 'ready') ?? free[0];
    if (!seat) {
      if (this.#seats.size >= this.opts.maxSeats)
        throw new DplabError(`The workshop is full (${this.opts.maxSeats} seats). Ask your instructor.`, { status: 503 });
      seat = await this.#newSeat();
    }
    const token = generateToken();
    seat.learner = { name, joinedAt: this.#now(), ...(limit ? { client: limit.client } : {}), token };
    seat.lastActiveAt = this.#now();
    this.#save(seat);
    this.opts.tokens.addLearner(token, seat.id);
    this.#changed();
    return { token, seat: seat.id, start: `/labs/${this.opts.lab.id}/` };
  }

  /** Where a seat's runner is and the token it wants, once it is ready. */
  target(id: string): { endpoint: SeatEndpoint; token: string } | { waiting: string } {
    const seat = this.#seats.get(id);
    if (!seat || seat.status.phase === 'deleted') return { waiting: 'This seat is gone: the workshop has ended.' };
    // A seat whose warm clusters are still coming up already has a runner that answers.
    if (seat.status.endpoint && seat.status.phase !== 'failed') return { endpoint: seat.status.endpoint, token: seat.runnerToken };
    return { waiting: seat.status.message ?? 'Your seat is being prepared.' };
  }

  has(id: string): boolean {
    return this.#seats.has(id);
  }

  /** The learner typed or acted. */
  touch(id: string): void {
    const seat = this.#seats.get(id);
    if (seat) seat.lastActiveAt = this.#now();
  }

  /** Read this seat's progress now (a check just went through): the dashboard shows it without waiting for the next round. */
  refresh(id: string, what: { clusters?: boolean } = {}): void {
    const seat = this.#seats.get(id);
    if (!seat) return;
    seat.nextActivity = 0;
    if (what.clusters) seat.nextClusters = 0;
    this.#tick();
  }

  setBroadcast(message: string): void {
    this.#broadcast = message.trim() || undefined;
    this.#changed();
  }

  learnerView(id: string): LearnerView | undefined {
    const seat = this.#seats.get(id);
    if (!seat?.learner) return undefined;
    return {
      seat: id,
      name: seat.learner.name,
      phase: seat.status.phase,
      message: seat.status.message,
      broadcast: this.#broadcast,
      ended: this.#ended,
    };
  }

  state(): DashboardState {
    const now = this.#now();
    const seats: SeatRow[] = [...this.#seats.values()].map((s) => {
      const steps = stepCells(this.opts.lab, s.activity);
      return {
        id: s.id,
        learner: s.learner?.name,
        phase: s.status.phase,
        message: s.setAside ?? s.error ?? s.status.message,
        clusters: s.clusters,
        steps,
        stuck: s.learner ? stuckReason(this.opts.lab, steps, { lastActiveAt: s.lastActiveAt, now, idleMs: this.opts.idleMs }) : undefined,
        lastActiveAt: s.lastActiveAt,
        readAt: s.readAt,
      };
    });
    return {
      lab: { id: this.opts.lab.id, title: this.opts.lab.title, steps: this.opts.lab.steps.map((s) => ({ id: s.id, title: s.title })) },
      code: this.opts.code,
      joinUrl: this.opts.joinUrl,
      broadcast: this.#broadcast,
      ended: this.#ended,
      ending: this.#ending,
      seats,
    };
  }

  /** End the workshop: every seat's clusters deleted through its runner, then the runners and their files. */
  async end(): Promise<{ failed: string[] }> {
    if (this.#ended) return { failed: [] };
    this.#ending = true;
    this.#changed();
    const queue = [...this.#seats.values()];
    const failed: string[] = [];
    const worker = async () => {
      for (let seat = queue.shift(); seat; seat = queue.shift()) {
        seat.stream?.controller.abort();
        seat.status = { ...seat.status, message: 'Deleting clusters…' };
        this.#changed();
        try {
          await this.opts.backend.delete(seat.id);
          this.opts.store?.removeSeat(seat.id);
          this.opts.tokens.removeSeat(seat.id);
          this.#seats.delete(seat.id);
        } catch (err) {
          failed.push(seat.id);
          seat.error = `Ending failed: ${err instanceof Error ? err.message : String(err)}`;
        }
        this.#changed();
      }
    };
    await Promise.all(Array.from({ length: this.#timing.endConcurrency }, worker));
    this.#ending = false;
    this.#ended = failed.length === 0;
    this.#changed();
    return { failed };
  }

  /**
   * The instructor frees one seat (a learner gone, a client that took more than its share): its
   * learner's token stops working, its clusters and runner go, and its id is not handed out again.
   */
  async removeSeat(id: string): Promise<void> {
    const seat = this.#seats.get(id);
    if (!seat) throw new DplabError(`There is no seat ${id.slice(0, 40)}.`, { status: 404 });
    this.opts.tokens.removeSeat(id);
    seat.learner = undefined;
    if (!seat.setAside) this.#save(seat);
    seat.stream?.controller.abort();
    seat.status = { ...seat.status, message: 'Deleting clusters…' };
    this.#changed();
    try {
      await this.opts.backend.delete(id);
    } catch (err) {
      seat.error = `Removing failed: ${err instanceof Error ? err.message : String(err)}`;
      this.#changed();
      throw err;
    }
    this.opts.store?.removeSeat(id);
    this.#seats.delete(id);
    this.#reserved.add(id);
    this.#changed();
  }

  close(): void {
    clearInterval(this.#timer);
    for (const seat of this.#seats.values()) seat.stream?.controller.abort();
  }

  /** Seats whose activity reaches the dashboard by their stream (for tests and the benchmark). */
  streaming(): string[] {
    return [...this.#seats.values()].filter((s) => s.stream?.live).map((s) => s.id);
  }

  /**
   * Open the seat's activity stream: each change of its activity or of a cluster's state arrives
   * as it happens, and polling stops but for a slow reconcile. A stream that ends or breaks
   * is opened again after activityMs, polling meanwhile.
   */
  #openStream(seat: Seat, endpoint: SeatEndpoint): void {
    const stream = { controller: new AbortController(), live: false };
    seat.stream = stream;
    const seen = () => {
      seat.readAt = this.#now();
      if (!stream.live) {
        stream.live = true;
        seat.nextClusters = Math.min(seat.nextClusters, this.#now() + this.#timing.reconcileMs);
      }
      if (seat.error) {
        seat.error = undefined;
        this.#changed();
      }
    };
    void new SeatClient(endpoint, seat.runnerToken)
      .watchActivity(
        {
          activity: (activity) => {
            seen();
            if (JSON.stringify(activity) === JSON.stringify(seat.activity)) return;
            seat.activity = activity;
            this.#changed();
          },
          cluster: ({ mode, state }) => {
            seen();
            const before = seat.clusters.find((c) => c.mode === mode);
            if (before?.state === state) return;
            seat.clusters = [...seat.clusters.filter((c) => c.mode !== mode), { mode, state }].sort((a, b) => a.mode.localeCompare(b.mode));
            this.#changed();
          },
        },
        { signal: stream.controller.signal },
      )
      .catch(() => undefined)
      .finally(() => {
        if (seat.stream === stream) seat.stream = undefined;
        seat.nextStream = this.#now() + this.#timing.activityMs;
      });
  }

  #changed(): void {
    // Many changes in one turn make one event.
    if (this.#changePending) return;
    this.#changePending = true;
    queueMicrotask(() => {
      this.#changePending = false;
      this.changes.emit();
    });
  }

  #tick(): void {
    const now = this.#now();
    for (const seat of this.#seats.values()) {
      if (seat.busy || this.#ending || seat.setAside) continue;
      if (seat.status.phase === 'pending' || (seat.status.phase === 'failed' && !seat.status.endpoint)) {
        seat.busy = true;
        void this.opts.backend
          .status(seat.id)
          .then((st) => {
            if (JSON.stringify(st) !== JSON.stringify(seat.status)) {
              seat.status = st;
              this.#changed();
            }
            if (st.endpoint) seat.nextClusters = 0;
          })
          .catch(() => undefined)
          .finally(() => (seat.busy = false));
        continue;
      }
      const endpoint = seat.status.endpoint;
      if (!endpoint) continue;
      if (!seat.stream && now >= seat.nextStream) this.#openStream(seat, endpoint);
      const live = !!seat.stream?.live;
      const wantActivity = now >= seat.nextActivity;
      const wantClusters = now >= seat.nextClusters;
      if (!wantActivity && !wantClusters) continue;
      seat.busy = true;
      const client = new SeatClient(endpoint, seat.runnerToken);
      void (async () => {
        try {
          if (wantActivity) {
            seat.nextActivity = now + (live ? this.#timing.reconcileMs : this.#timing.activityMs);
            const activity = await client.activity();
            if (JSON.stringify(activity) !== JSON.stringify(seat.activity)) {
              seat.activity = activity;
              this.#changed();
            }
          }
          if (wantClusters) {
            seat.nextClusters = now + (live ? this.#timing.reconcileMs : this.#timing.clustersMs);
            const clusters = (await client.clusters()).map((c) => ({ mode: c.mode, state: c.state }));
            if (JSON.stringify(clusters) !== JSON.stringify(seat.clusters)) {
              seat.clusters = clusters;
              this.#changed();
            }
          }
          seat.readAt = this.#now();
          if (seat.error) {
            seat.error = undefined;
            this.#changed();
          }
        } catch (err) {
          const message = `Could not read this seat: ${err instanceof Error ? err.message : String(err)}`;
          if (seat.error !== message) {
            seat.error = message;
            this.#changed();
          }
        } finally {
          seat.busy = false;
        }
      })();
    }
  }
}
