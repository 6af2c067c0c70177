/** One way to say where data did not match its schema: the field path and what was wrong there. */
import type { z } from 'zod';

/** `steps[2].hints` from zod's `['steps', 2, 'hints']`. */
export function fieldPath(path: readonly (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** `spec.ports[0].port: Expected number, received string; …` (first few issues). */
export function describeIssues(error: z.ZodError, max = 3): string {
  const shown = error.issues.slice(0, max).map((i) => `${i.path.length ? fieldPath(i.path) : '(top level)'}: ${i.message}`);
  const more = error.issues.length > max ? `; and ${error.issues.length - max} more` : '';
  return shown.join('; ') + more;
}
