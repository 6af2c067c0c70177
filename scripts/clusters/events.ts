/** Progress and status events of the clusters, as one typed stream the server relays (SSE). */
export type { ClusterEvent } from '../wire/clusters.ts';

export type Listener<T> = (event: T) => void;

/** A minimal typed emitter: listeners are disposed by the function `on` returns. */
export class Emitter<T> {
  readonly #listeners = new Set<Listener<T>>();

  on(listener: Listener<T>): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(event: T): void {
    for (const l of [...this.#listeners]) {
      try {
        l(event);
      } catch {
        // A broken listener (a closed SSE socket) must not stop provisioning or other listeners.
      }
    }
  }

  get size(): number {
    return this.#listeners.size;
  }
}
