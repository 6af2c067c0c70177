/**
 * What keeps a mode's cluster from starting on this machine (Docker missing or down, kind
 * missing). The cluster panel sets it from its status (`blocked`, with the error that says why);
 * where no panel is (the explorer) it is asked of the runner (GET /api/clusters/:mode/blocker).
 * Each change is announced as a `dplab:blocker` event, so the lab panel offers the recorded
 * replay, and the explorer and every lab button name the blocker instead of a Start that cannot work.
 */
import type { ErrorJson } from '../../scripts/wire/errors.ts';
import { clusterBlockerSchema } from '../../scripts/wire/replay.ts';
import { api } from './runner-api.ts';

const BLOCKER_EVENT = 'dplab:blocker';

export interface BlockerEvent {
  mode: string;
  blocker: ErrorJson | null;
}

const known = new Map<string, ErrorJson | null>();
const asking = new Map<string, Promise<ErrorJson | null>>();

/** The last answer for this mode (undefined: not asked yet). */
export function knownBlocker(mode: string): ErrorJson | null | undefined {
  return known.get(mode);
}

/** Ask the runner (one request at a time per mode); a runner that cannot answer counts as no blocker. */
export function askBlocker(mode: string): Promise<ErrorJson | null> {
  const pending = asking.get(mode);
  if (pending) return pending;
  const p = api(`/api/clusters/${encodeURIComponent(mode)}/blocker`, clusterBlockerSchema)
    .then((r) => r.blocker)
    .catch(() => null)
    .then((blocker) => {
      asking.delete(mode);
      setBlocker(mode, blocker);
      return blocker;
    });
  asking.set(mode, p);
  return p;
}

/** A cluster that started (or is starting) has no blocker any more. */
export function setBlocker(mode: string, blocker: ErrorJson | null): void {
  const before = known.get(mode);
  known.set(mode, blocker);
  if (JSON.stringify(before ?? null) === JSON.stringify(blocker) && before !== undefined) return;
  document.dispatchEvent(new CustomEvent<BlockerEvent>(BLOCKER_EVENT, { detail: { mode, blocker } }));
}

export function onBlocker(listener: (e: BlockerEvent) => void): () => void {
  const handler = (ev: Event) => listener((ev as CustomEvent<BlockerEvent>).detail);
  document.addEventListener(BLOCKER_EVENT, handler);
  return () => document.removeEventListener(BLOCKER_EVENT, handler);
}

/** One sentence for a button that cannot work here: the blocker, its fix, and what the page offers instead. */
export function blockedAction(blocker: ErrorJson, instead: string): { message: string; fix?: string } {
  return { message: `No cluster can start on this machine: ${blocker.message}`, fix: [blocker.fix, instead].filter(Boolean).join(' ') };
}
