/**
 * Learner progress in `<stateDir>/progress.json`, shared by the browser (GET/PUT /api/progress)
 * and the CLI (`dplab check` records passes). Writes are atomic (temp file + rename) and, within
 * one process, serialised. Ids are matched against the registry; unknown ones are dropped, so a
 * renamed lab in an old browser's localStorage cannot poison the file.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../base/atomic-file.ts';
import type { Mode } from '../catalogue/modes.ts';
import { DplabError } from '../base/errors.ts';
import { stateDir } from '../base/paths.ts';
import type { Lab } from './schema.ts';

import { progressFileSchema, PROGRESS_VERSION, type LabProgress, type ProgressFile } from '../wire/progress.ts';
import { describeIssues } from '../wire/validate.ts';
import { activityChanges } from './activity-changes.ts';

const progressSchema = progressFileSchema;
export type Progress = ProgressFile;

function progressFile(): string {
  return join(stateDir(), 'progress.json');
}

const empty = (): Progress => ({ version: PROGRESS_VERSION, labs: {} });

/** The stored progress; a missing or unreadable file reads as empty (progress is a convenience, not data to die for). */
export function readProgress(labs: readonly Lab[]): Progress {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(progressFile(), 'utf8'));
  } catch {
    return empty();
  }
  const parsed = progressSchema().safeParse(raw);
  return parsed.success ? sanitise(parsed.data, labs) : empty();
}

/** Keep only known labs, modes and steps. */
function sanitise(p: Progress, labs: readonly Lab[]): Progress {
  const out = empty();
  for (const lab of labs) {
    const entry = p.labs[lab.id];
    if (!entry) continue;
    const stepIds = new Set(lab.steps.map((s) => s.id));
    const passed: Record<string, string[]> = {};
    for (const [mode, steps] of Object.entries(entry.passed)) {
      if ((lab.modes as string[]).includes(mode)) passed[mode] = [...new Set(steps.filter((s) => stepIds.has(s)))];
    }
    const hints = Object.fromEntries(
      Object.entries(entry.hints)
        .filter(([s]) => stepIds.has(s))
        .map(([s, n]) => [s, Math.min(n, lab.steps.find((x) => x.id === s)!.hints.length)]),
    );
    out.labs[lab.id] = {
      mode: entry.mode && lab.modes.includes(entry.mode) ? entry.mode : undefined,
      passed,
      hints,
      updatedAt: entry.updatedAt,
    };
  }
  return out;
}

function writeAtomic(p: Progress): void {
  writeFileAtomic(progressFile(), `${JSON.stringify(p, null, 2)}\n`);
}

let queue: Promise<unknown> = Promise.resolve();

/** Read, change, write, one change at a time within this process. */
function updateProgress(labs: readonly Lab[], change: (p: Progress) => void): Promise<Progress> {
  const next = queue.then(() => {
    const p = readProgress(labs);
    change(p);
    const clean = sanitise(p, labs);
    writeAtomic(clean);
    activityChanges.emit();
    return clean;
  });
  queue = next.catch(() => undefined);
  return next;
}

function entryFor(p: Progress, lab: string): LabProgress {
  return (p.labs[lab] ??= { passed: {}, hints: {} });
}

export function recordPass(labs: readonly Lab[], lab: string, step: string, mode: Mode): Promise<Progress> {
  return updateProgress(labs, (p) => {
    const e = entryFor(p, lab);
    e.mode = mode;
    e.passed[mode] = [...new Set([...(e.passed[mode] ?? []), step])];
    e.updatedAt = new Date().toISOString();
  });
}

/** After a reset: forget passes from `fromStep` on (all steps when not given) for that mode. */
export function clearPasses(labs: readonly Lab[], lab: Lab, mode: Mode, fromStep?: string): Promise<Progress> {
  const keep = new Set(
    fromStep
      ? lab.steps
          .slice(
            0,
            lab.steps.findIndex((s) => s.id === fromStep),
          )
          .map((s) => s.id)
      : [],
  );
  return updateProgress(labs, (p) => {
    const e = entryFor(p, lab.id);
    e.passed[mode] = (e.passed[mode] ?? []).filter((s) => keep.has(s));
    e.updatedAt = new Date().toISOString();
  });
}

/**
 * Merge what a browser sends: passes are unioned (a stale tab cannot undo a pass; reset does
 * that), hints take the larger count, the mode is the browser's.
 */
/**
 * `passes: false` (a workshop seat): steps marked passed by the browser are not taken; there a
 * pass is only what this runner's own check recorded (recordPass), so the instructor's dashboard
 * shows checks, never what a page claims (issue 36).
 */
export function mergeProgress(labs: readonly Lab[], body: unknown, opts: { passes?: boolean } = {}): Promise<Progress> {
  const parsed = progressSchema().safeParse(body);
  if (!parsed.success) {
    throw new DplabError(`Progress body is not valid: ${describeIssues(parsed.error, 1)}`, { status: 400 });
  }
  const incoming = sanitise(parsed.data, labs);
  return updateProgress(labs, (p) => {
    for (const [id, inc] of Object.entries(incoming.labs)) {
      const e = entryFor(p, id);
      if (inc.mode) e.mode = inc.mode;
      if (opts.passes !== false)
        for (const [mode, steps] of Object.entries(inc.passed)) e.passed[mode] = [...new Set([...(e.passed[mode] ?? []), ...steps])];
      for (const [step, n] of Object.entries(inc.hints)) e.hints[step] = Math.max(e.hints[step] ?? 0, n);
      e.updatedAt = new Date().toISOString();
    }
  });
}
