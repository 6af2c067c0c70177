/**
 * The one place lab data errors are worded: every problem names the file and the field path
 * (`labs/first-service/lab.ts: steps[2].hints: must have at least 1 item`), so an author can
 * go straight to the line. Used by the loader and by the observation reader.
 */
import type { ZodError, ZodIssue } from 'zod';
import { DplabError } from '../base/errors.ts';
import { fieldPath } from '../wire/validate.ts';

export { fieldPath };

function issueLine(file: string, issue: Pick<ZodIssue, 'path' | 'message'>): string {
  const where = fieldPath(issue.path);
  return `${file}: ${where ? `${where}: ` : ''}${issue.message}`;
}

/** A DplabError listing every issue, one line each; the first line is the headline. */
export function labDataError(file: string, issues: readonly Pick<ZodIssue, 'path' | 'message'>[]): DplabError {
  const lines = issues.map((i) => issueLine(file, i));
  return new DplabError(lines[0] ?? `${file}: invalid`, {
    fix: `Correct ${file}; every problem found:\n${lines.map((l) => `  - ${l}`).join('\n')}`,
    details: lines.join('\n'),
  });
}

export function fromZodError(file: string, err: ZodError): DplabError {
  return labDataError(file, err.issues);
}
