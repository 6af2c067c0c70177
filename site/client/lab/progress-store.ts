/**
 * The page's copy of lab progress: localStorage for instant reloads, the runner's
 * /api/progress so the CLI and other tabs agree. Passes are unioned both ways; a reset clears.
 */
import { labProgressSchema, progressFileSchema, type LabProgress } from '../../../scripts/wire/progress.ts';
import { acceptedSchema } from '../../../scripts/wire/session.ts';
import { api } from '../runner-api.ts';

export type { LabProgress };

const key = (lab: string) => `dplab:lab:${lab}`;

export function loadLocal(lab: string): LabProgress {
  try {
    // An older or hand-edited copy that does not match the schema starts over; the runner's copy fills it in.
    const v = labProgressSchema().safeParse(JSON.parse(localStorage.getItem(key(lab)) ?? '{}'));
    return v.success ? v.data : { passed: {}, hints: {} };
  } catch {
    return { passed: {}, hints: {} };
  }
}

export function saveLocal(lab: string, p: LabProgress): void {
  localStorage.setItem(key(lab), JSON.stringify(p));
}

export function merge(a: LabProgress, b: LabProgress | undefined): LabProgress {
  if (!b) return a;
  const passed: Record<string, string[]> = { ...a.passed };
  for (const [m, steps] of Object.entries(b.passed ?? {})) passed[m] = [...new Set([...(passed[m] ?? []), ...steps])];
  const hints: Record<string, number> = { ...a.hints };
  for (const [s, n] of Object.entries(b.hints ?? {})) hints[s] = Math.max(hints[s] ?? 0, n);
  return { mode: a.mode ?? b.mode, passed, hints };
}

/** Fetch the runner's view; undefined when the runner is not there (the page still works from localStorage). */
export async function loadRemote(lab: string): Promise<LabProgress | undefined> {
  try {
    const all = await api('/api/progress', progressFileSchema());
    return all.labs[lab];
  } catch {
    return undefined;
  }
}

export async function saveRemote(lab: string, p: LabProgress): Promise<void> {
  try {
    await api('/api/progress', acceptedSchema, { method: 'PUT', body: { labs: { [lab]: p } } });
  } catch {
    // Offline: localStorage keeps it; the next successful save carries it over.
  }
}
