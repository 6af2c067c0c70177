/**
 * One way to say where data did not match its schema: the field path and what was wrong there.
 * It reads the issues of zod 3 (the lab and Kubernetes object schemas) and of zod 4 mini (the
 * wire schemas). No zod 4 locale is loaded anywhere (the browser would carry it): zod 4 leaves
 * "Invalid input" on an issue whose schema gave no message, and the words come from the issue
 * itself here.
 */

/** What describeIssues reads of an issue; zod 3's and zod 4's issues both have it. */
export interface SchemaIssue {
  readonly code: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  /** zod 4: the type an `invalid_type` issue wanted. */
  readonly expected?: unknown;
  /** zod 4: the values an `invalid_value` issue (an enum or a literal) allows. */
  readonly values?: readonly unknown[];
  /** zod 4: the bound of a `too_small` / `too_big` issue. */
  readonly minimum?: unknown;
  readonly maximum?: unknown;
  /** zod 4: `No matching discriminator` on a union. */
  readonly note?: string;
}

/** zod 4's message when the schema gave none and no locale is configured. */
const BARE = 'Invalid input';

/** `steps[2].hints` from zod's `['steps', 2, 'hints']`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
}

/** The schema's own message, else words from the issue's code and what it carries. */
function issueText(i: SchemaIssue): string {
  if (i.message !== BARE) return i.message;
  switch (i.code) {
    case 'invalid_type':
      return `Expected ${String(i.expected)}`;
    case 'invalid_value':
      return `Expected ${(i.values ?? []).map((v) => JSON.stringify(v)).join(' or ')}`;
    case 'too_small':
      return `Expected at least ${String(i.minimum)}`;
    case 'too_big':
      return `Expected at most ${String(i.maximum)}`;
    case 'invalid_union':
      return i.note ?? 'Matches none of the allowed shapes';
    default:
      return `${BARE} (${i.code})`;
  }
}

/** `spec.ports[0].port: Expected number, received string; …` (first few issues). */
export function describeIssues(error: { readonly issues: readonly SchemaIssue[] }, max = 3): string {
  const shown = error.issues.slice(0, max).map((i) => `${i.path.length ? fieldPath(i.path) : '(top level)'}: ${issueText(i)}`);
  const more = error.issues.length > max ? `; and ${error.issues.length - max} more` : '';
  return shown.join('; ') + more;
}
