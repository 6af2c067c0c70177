/**
 * One read for everyone who asks at about the same time: callers asking for the same key while a
 * read runs (or within `freshMs` of its answer) get that read's answer instead of starting their
 * own. Each caller's signal lets that caller stop waiting; the read itself is cancelled when the
 * last one waiting for it has gone, and that last caller's promise settles only once the read
 * has, so nothing it started outlives everyone who asked.
 *
 * For the lab terminal's cluster notice: each terminal asked the cluster's status for itself,
 * so a class of pages opening and dropping terminals ran `kind get clusters` and a kubectl for
 * every one, and the runner spent seconds forking them (issue 36, item 8).
 */
export function sharedRead<K, T>(
  read: (key: K, signal: AbortSignal) => Promise<T>,
  freshMs: number,
  now: () => number = Date.now,
): (key: K, signal?: AbortSignal) => Promise<T> {
  interface Entry {
    promise: Promise<T>;
    controller: AbortController;
    waiting: number;
    doneAt?: number;
  }
  const entries = new Map<K, Entry>();
  return (key, signal) => {
    let entry = entries.get(key);
    if (!entry || entry.controller.signal.aborted || (entry.doneAt !== undefined && now() - entry.doneAt > freshMs)) {
      const controller = new AbortController();
      const fresh: Entry = { controller, waiting: 0, promise: read(key, controller.signal) };
      fresh.promise.then(
        () => (fresh.doneAt = now()),
        () => entries.get(key) === fresh && entries.delete(key),
      );
      entries.set(key, fresh);
      entry = fresh;
    }
    const joined = entry;
    joined.waiting++;
    return new Promise<T>((resolve, reject) => {
      let left = false;
      const leave = () => {
        if (left) return;
        left = true;
        signal?.removeEventListener('abort', onAbort);
        joined.waiting--;
      };
      const onAbort = () => {
        leave();
        const reason = signal!.reason ?? new Error('aborted');
        if (joined.waiting > 0 || joined.doneAt !== undefined) return reject(reason);
        joined.controller.abort(reason);
        void joined.promise.then(
          () => reject(reason),
          () => reject(reason),
        );
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      // A caller that stopped waiting has its answer already (its own reason).
      joined.promise.then(
        (value) => {
          if (left) return;
          leave();
          resolve(value);
        },
        (err: unknown) => {
          if (left) return;
          leave();
          reject(err);
        },
      );
    });
  };
}
