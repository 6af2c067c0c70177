/**
 * The one error shape the runner shows to people: a headline, the fix when we know it, and
 * details (a command's output, say) that are printed under the headline, never instead of it.
 */
export interface DplabErrorOptions {
  /** What the learner can do about it, as a command or a sentence. */
  fix?: string;
  /** Supporting output (stderr, the command line); shown as details. */
  details?: string;
  /** The HTTP status this error maps to when it crosses the API. */
  status?: number;
  cause?: unknown;
}

export class DplabError extends Error {
  readonly fix?: string;
  readonly details?: string;
  readonly status: number;

  constructor(message: string, opts: DplabErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'DplabError';
    this.fix = opts.fix;
    this.details = opts.details;
    this.status = opts.status ?? 500;
  }
}

/** 404 for an id the client sent that we do not know; the message names the known ones. */
export function unknownId(kind: string, id: string, known: readonly string[]): DplabError {
  return new DplabError(`Unknown ${kind} "${id.slice(0, 80)}". Known: ${known.join(', ')}.`, { status: 404 });
}

/** A JSON-safe view of any error, for the API and `--json` output. */
export function errorToJson(err: unknown): { message: string; fix?: string; details?: string } {
  if (err instanceof DplabError) return { message: err.message, fix: err.fix, details: err.details };
  if (err instanceof Error) return { message: err.message };
  return { message: String(err) };
}
