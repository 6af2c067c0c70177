/**
 * A seat is one learner's own runner: its session token, clusters, terminals, workspace and
 * progress. The portal creates seats through a backend and forwards each learner's API calls
 * and terminal sockets to their seat's runner, choosing the seat by the learner's seat token.
 *
 * Two backends implement this interface:
 * - `local` (`local-backend.ts`): a runner process per seat on the portal's own host, with its
 *   own state folder and clusters named per seat (`dplab-<seat>-<mode>`).
 * - `kubernetes` (`kubernetes-backend.ts`): a pod per seat (the runner plus a Docker-in-Docker
 *   sidecar in which kind runs), its Service and Secret, made through the Kubernetes API.
 *
 * The portal never knows which backend it has.
 */
import type { Mode } from '../wire/modes.ts';

/** Seat ids name clusters, folders and Kubernetes objects, so they are DNS-label safe (defined in wire: the runner reads DPLAB_SEAT too). */
export { SEAT_ID_PATTERN } from '../wire/seat.ts';

type SeatPhase = 'pending' | 'ready' | 'failed' | 'deleted';

export interface SeatSpec {
  /** Matches SEAT_ID_PATTERN. */
  id: string;
  /** The token the seat's runner will demand (≥ 128 bits); only the portal holds it. */
  runnerToken: string;
  /** Modes whose clusters are brought up before the learner arrives (a hot start); [] for none. */
  warm: readonly Mode[];
}

export interface SeatEndpoint {
  /** Where the portal reaches the seat's runner, e.g. http://127.0.0.1:43117 or http://dplab-seat-a1.ns.svc:4321. */
  url: string;
  /** The Host header the seat's runner answers to (it refuses any other: no DNS rebinding). */
  host: string;
}

export interface SeatStatus {
  id: string;
  phase: SeatPhase;
  /** Set once phase is 'ready'. */
  endpoint?: SeatEndpoint;
  /** What went wrong, or what it is waiting for, in words a person can act on. */
  message?: string;
}

export interface SeatBackend {
  readonly kind: 'local' | 'kubernetes';
  /** Start making the seat; resolves once the request is accepted (phase 'pending'). Idempotent per id. */
  create(spec: SeatSpec): Promise<SeatStatus>;
  /**
   * Serve again a seat an earlier portal made (one `list()` gives, left by a crash or a kill),
   * with the token its runner had: its workspace, progress and clusters as they were, its runner
   * started again if it did not outlive that portal. Resolves like create (phase 'pending' or 'ready').
   */
  resume(spec: SeatSpec): Promise<SeatStatus>;
  /** The seat as it is now; phase 'deleted' for an id the backend does not know. */
  status(id: string): Promise<SeatStatus>;
  /** Every seat this backend made (and only those). */
  list(): Promise<SeatStatus[]>;
  /** Delete the seat: its clusters first (through its runner), then the runner and its files. Idempotent. */
  delete(id: string, opts?: { signal?: AbortSignal }): Promise<void>;
}
