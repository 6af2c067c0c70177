/** Small builders so every check words its facts and verdicts the same way. */
import type { Fact, Verdict } from './types.ts';

export function fact(label: string, expected: unknown, seen: unknown, ok?: boolean): Fact {
  const e = show(expected);
  const s = show(seen);
  return { label, expected: e, seen: s, ok: ok ?? e === s };
}

function show(value: unknown): string {
  if (value === undefined || value === null || value === '') return '(none)';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.length ? value.map(show).join(', ') : '(none)';
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return entries.length ? entries.map(([k, v]) => `${k}=${show(v)}`).join(', ') : '(none)';
  }
  return String(value);
}

export function pass(message: string, facts: Fact[]): Verdict {
  return { status: 'pass', message, facts };
}

export function fail(message: string, facts: Fact[], pending = false): Verdict {
  return pending ? { status: 'fail', message, facts, pending } : { status: 'fail', message, facts };
}
