/**
 * A check's message reworded is one edit plus one command: `dplab verify-labs --reword` replays
 * every stored observation file (recorded or written by hand) through its step's current check
 * and writes the new message into the file's `expect`, where only the message changed. A changed
 * status is not a rewording but a changed check: it is listed, and the file is left for
 * `verify-labs --record` on a live cluster. No cluster is needed.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { projectRoot } from '../base/paths.ts';
import type { Mode } from '../catalogue/modes.ts';
import { findObservationFiles, readObservationFile, STATES } from './observations.ts';
import type { Lab } from './schema.ts';

interface Reworded {
  /** The file, relative to the project. */
  file: string;
  from: string;
  to: string;
}

interface NotReworded {
  file: string;
  why: string;
}

export interface RewordReport {
  reworded: Reworded[];
  /** Files whose verdict changed more than its words, or whose modes now want different words. */
  left: NotReworded[];
  /** Files read whose message is already the check's. */
  unchanged: number;
}

/** Writes the file; a test passes its own. */
type WriteFile = (path: string, text: string) => void;

/** Replays every observation file of `labs`; with `write`, puts each new message in its file. */
export function rewordRecordings(labs: readonly Lab[], opts: { write?: WriteFile } = {}): RewordReport {
  const report: RewordReport = { reworded: [], left: [], unchanged: 0 };
  for (const lab of labs) {
    for (const step of lab.steps) {
      for (const state of STATES) {
        // A hand-written file shared by modes is replayed for each of them: one message must fit all.
        const byFile = new Map<
          string,
          { modes: Mode[]; messages: Set<string>; status?: string; was?: { status: string; message: string } }
        >();
        for (const mode of lab.modes) {
          for (const path of findObservationFiles(lab.id, step.id, state, mode)) {
            const name = relative(projectRoot, path);
            const file = readObservationFile(path, name, step.check.observations);
            if (!file.expect) continue;
            const verdict = step.check.evaluate(file.observations, { mode, namespace: lab.namespace });
            const entry = byFile.get(path) ?? { modes: [], messages: new Set<string>(), was: file.expect };
            entry.modes.push(mode);
            entry.messages.add(verdict.message);
            if (verdict.status !== file.expect.status) entry.status = `${verdict.status} on ${mode} (${verdict.message})`;
            byFile.set(path, entry);
          }
        }
        for (const [path, e] of byFile) {
          const file = relative(projectRoot, path);
          if (e.status) {
            report.left.push({ file, why: `the check now says ${e.status}, not ${e.was!.status}: record it again on a live cluster` });
            continue;
          }
          if (e.messages.size > 1) {
            report.left.push({ file, why: `its modes (${e.modes.join(', ')}) now get different messages: give each mode its own file` });
            continue;
          }
          const [to] = e.messages;
          if (to === e.was!.message) {
            report.unchanged++;
            continue;
          }
          report.reworded.push({ file, from: e.was!.message, to });
          if (opts.write) {
            // The file's own JSON, not the parsed one: nothing but the message changes.
            const raw = JSON.parse(readFileSync(path, 'utf8')) as { expect: { message: string } };
            raw.expect.message = to;
            opts.write(path, `${JSON.stringify(raw, null, 2)}\n`);
          }
        }
      }
    }
  }
  return report;
}

export const writeToDisk: WriteFile = (path, text) => writeFileSync(path, text);
