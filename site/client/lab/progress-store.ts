/**
 * The page's copy of lab progress: localStorage for instant reloads, the runner's
 * /api/progress so the CLI and other tabs agree. Passes are unioned both ways; a reset clears.
 */
import { api } from '../runner-api.ts';

export interface LabProgress {
  mode?: string;
  passed: Record<string, string[]>;
  hints: Record<string, number>;
}

const key = (lab: string) => `dplab:lab:${lab}`;

export function loadLocal(lab: string): LabProgress {
  try {
    const v = JSON.parse(localStorage.getItem(key(lab)) ?? '{}');
    return { mode: typeof v.mode === 'string' ? v.mode : undefined, passed: v.passed ?? {}, hints: v.hints ?? {} };
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
    const all = await api<{ labs: Record<string, LabProgress> }>('/api/progress');
    return all.labs[lab];
  } catch {
    return undefined;
  }
}

export async function saveRemote(lab: string, p: LabProgress): Promise<void> {
  try {
    await api('/api/progress', { method: 'PUT', body: { labs: { [lab]: p } } });
  } catch {
    // Offline: localStorage keeps it; the next successful save carries it over.
  }
}
