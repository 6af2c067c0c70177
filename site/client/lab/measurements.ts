/**
 * The measurements a lab's checks returned as figures, kept in localStorage per lab. Each mode
 * runs on its own cluster and is measured one after another, so the comparison only exists if
 * the browser keeps every (mode, Services) point; a new check of the same point replaces it.
 * Lab progress (progress-store.ts) is a different thing: it syncs with the runner and resets.
 */

import type { Figure } from '../../../scripts/wire/checks.ts';
import type { ConnectionCost } from '../../../scripts/wire/connection-cost.ts';

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
  /** A new TCP connection to a ClusterIP from the node, median and p90 in µs (connect-cost.sh). */
  connectUs?: number;
  connectP90Us?: number;
  /** iptables: KUBE-SERVICES rules ahead of the timed Service's rule. */
  connectAhead?: number;
}

/** The optional figures a check may add to a point, by the name the check gives them. */
const OPTIONAL = ['syncMsAvg', 'syncMsP90', 'connectUs', 'connectP90Us', 'connectAhead'] as const;

const key = (lab: string) => `dplab:measurements:${lab}`;
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** A check's figures as a measurement; undefined when they lack the two numbers a point needs. */
export function fromFigures(mode: string, figures: Record<string, Figure> | undefined): Measurement | undefined {
  const services = figures?.services?.value;
  const entries = figures?.entries?.value;
  if (!isNumber(services) || !isNumber(entries)) return undefined;
  const m: Measurement = { mode, services, entries, entriesLabel: figures!.entries.label ?? 'entries' };
  for (const k of OPTIONAL) {
    const v = figures![k]?.value;
    if (isNumber(v)) m[k] = v;
  }
  return m;
}

/**
 * The list with `m` in it, ordered by mode, then Services. A point of the same mode and Service
 * count takes `m`'s numbers and keeps those `m` does not carry: the connection step measures at
 * the same 1,000 Services as the count before it, and neither should erase the other.
 */
export function upsert(list: readonly Measurement[], m: Measurement): Measurement[] {
  const same = list.find((x) => x.mode === m.mode && x.services === m.services);
  return [...list.filter((x) => x !== same), { ...same, ...m }].sort((a, b) => a.mode.localeCompare(b.mode) || a.services - b.services);
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

/** The recorded figures (connection-cost.json) as measurements the charts draw: one per mode and size, modes not recorded left out. */
export function recordedMeasurements(data: ConnectionCost): Measurement[] {
  return data.modes.flatMap((m) =>
    m.recorded
      ? m.points.map((p) => ({
          mode: m.mode,
          services: p.services,
          entries: p.entries,
          entriesLabel: m.entriesLabel,
          connectUs: p.medianUs,
          connectP90Us: p.p90Us,
          ...(p.ahead === undefined ? {} : { connectAhead: p.ahead }),
        }))
      : [],
  );
}
