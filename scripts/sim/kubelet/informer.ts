/**
 * List-then-watch of one kind of object, as client-go's reflector does it: list, watch from the
 * list's resourceVersion, follow bookmarks, and list again when the server says the version is
 * too old (410 Gone, as an HTTP status or as an ERROR event). Handlers see each object's latest
 * state and its deletion, including deletions that happened while the watch was down.
 */
import { ApiClient, ApiError, type WatchEvent } from './api-client.ts';

export interface KubeObject {
  metadata: { name: string; namespace?: string; uid: string; resourceVersion?: string };
}

export interface InformerHandlers<T extends KubeObject> {
  upsert(obj: T): void;
  remove(obj: T): void;
}

/** Server-side watch length; the server ends the stream and we continue from the last version. */
const WATCH_TIMEOUT_SECONDS = 300;
const RETRY_MS = 1_000;

interface List<T> {
  metadata: { resourceVersion: string };
  items: T[];
}

class Gone extends Error {}

export function runInformer<T extends KubeObject>(
  api: ApiClient,
  /** Collection path, e.g. `/api/v1/pods`. */
  path: string,
  /** Query without watch parameters, e.g. `fieldSelector=spec.nodeName%3Dworker`. */
  query: string,
  handlers: InformerHandlers<T>,
  signal: AbortSignal,
  onError: (err: unknown) => void = () => {},
): Promise<void> {
  const known = new Map<string, T>();
  const sep = query ? '&' : '';

  const list = async (): Promise<string> => {
    const l = await api.get<List<T>>(`${path}?${query}`, signal);
    const seen = new Set<string>();
    for (const item of l.items) {
      seen.add(item.metadata.uid);
      known.set(item.metadata.uid, item);
      handlers.upsert(item);
    }
    for (const [uid, old] of known) {
      if (!seen.has(uid)) {
        known.delete(uid);
        handlers.remove(old);
      }
    }
    return l.metadata.resourceVersion;
  };

  const loop = async (): Promise<void> => {
    let rv: string | null = null;
    while (!signal.aborted) {
      try {
        if (rv === null) rv = await list();
        let version: string = rv;
        const onEvent = (e: WatchEvent<T>) => {
          if (e.type === 'ERROR') {
            const status = e.object as unknown as { code?: number; message?: string };
            if (status.code === 410) throw new Gone(status.message);
            throw new Error(`watch ${path}: ${status.message ?? 'error event'}`);
          }
          version = e.object.metadata.resourceVersion ?? version;
          if (e.type === 'BOOKMARK') return;
          if (e.type === 'DELETED') {
            known.delete(e.object.metadata.uid);
            handlers.remove(e.object);
          } else {
            known.set(e.object.metadata.uid, e.object);
            handlers.upsert(e.object);
          }
        };
        await api.watch<T>(
          `${path}?${query}${sep}watch=1&allowWatchBookmarks=true&timeoutSeconds=${WATCH_TIMEOUT_SECONDS}&resourceVersion=${encodeURIComponent(version)}`,
          onEvent,
          signal,
        );
        rv = version;
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof Gone || (err instanceof ApiError && err.code === 410)) {
          rv = null;
          continue;
        }
        onError(err);
        rv = null;
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
  };
  return loop();
}
