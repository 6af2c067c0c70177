/**
 * Lab prose lives in Markdown files next to lab.ts (Markdown is full of backticks, which fight
 * with template literals). Paths resolve from the project root, so this works under tsx, vitest
 * and inside Astro's bundled build alike (import.meta.url would point into dist/ there).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DplabError } from '../base/errors.ts';
import { labsDir } from '../base/paths.ts';

export function labText(labId: string, rel: string): string {
  const file = join(labsDir, labId, rel);
  try {
    return readFileSync(file, 'utf8');
  } catch {
    throw new DplabError(`labs/${labId}/lab.ts: cannot read ${rel}`, { fix: `Create labs/${labId}/${rel} or correct the path in lab.ts.` });
  }
}
