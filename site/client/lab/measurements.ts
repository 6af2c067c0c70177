/**
 * The measurements a lab's checks returned as figures, kept in localStorage per lab. Each mode
 * runs on its own cluster and is measured one after another, so the comparison only exists if
 * the browser keeps every (mode, Services) point; a new check of the same point replaces it.
 * Lab progress (progress-store.ts) is a different thing: it syncs with the runner and resets.
 */

import type { Figure } from '../../../scripts/wire/checks.ts';

export type { Figure };

export interface Measurement {
  mode: string;
  /** Generated Services when the count was taken. */
  services: number;
  /** Rules or entries on the node, and what this mode counts. */
  entries: number;
  entriesLabel: string;
  /** kube-proxy's sync time in ms; absent on Cilium (no kube-proxy). */
  syncMsAvg?: number;
  syncMsP90?: number;
}

const key = (lab: string) => `dplab:measurements:${lab}`;
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** A check's figures as a measurement; undefined when they lack the two numbers a point needs. */
export function fromFigures(mode: string, figures: Record<string, Figure> | undefined): Measurement | undefined {
  const services = figures?.services?.value;
  const entries = figures?.entries?.value;
  if (!isNumber(services) || !isNumber(entries)) return undefined;
  const m: Measurement = { mode, services, entries, entriesLabel: figures!.entries.label ?? 'entries' };
  if (isNumber(figures!.syncMsAvg?.value)) m.syncMsAvg = figures!.syncMsAvg.value;
  if (isNumber(figures!.syncMsP90?.value)) m.syncMsP90 = figures!.syncMsP90.value;
  return m;
}

/** The list with `m` in it, replacing the same mode and Service count; ordered by mode, then Services. */
export function upsert(list: readonly Measurement[], m: Measurement): Measurement[] {
  return [...list.filter((x) => x.mode !== m.mode || x.services !== m.services), m].sort(
    (a, b) => a.mode.localeCompare(b.mode) || a.services - b.services,
  );
}

/** Stored measurements; anything malformed (an older shape, a hand edit) is dropped, not thrown. */
export function loadMeasurements(lab: string): Measurement[] {
  try {
    const raw: unknown = JSON.parse(localStorage.getItem(key(lab)) ?? '[]');
    if (!Array.isArray(raw)) return [];
    return raw.filter(
      (m): m is Measurement =>
        typeof m?.mode === 'string' && isNumber(m.services) && isNumber(m.entries) && typeof m.entriesLabel === 'string',
    );
  } catch {
    return [];
  }
}

export function saveMeasurements(lab: string, list: readonly Measurement[]): void {
  if (list.length) localStorage.setItem(key(lab), JSON.stringify(list));
  else localStorage.removeItem(key(lab));
}

/** Keep a check's figures; returns the updated list (unchanged when the figures make no point). */
export function recordMeasurement(lab: string, mode: string, figures: Record<string, Figure> | undefined): Measurement[] {
  const list = loadMeasurements(lab);
  const m = fromFigures(mode, figures);
  if (!m) return list;
  const next = upsert(list, m);
  saveMeasurements(lab, next);
  return next;
}
