// JSON parsing with the failure turned into a ParseError that points at the line, shared by the
// nft -j and cilium -o json parsers.
import { ParseError } from './parse-error.ts';

export function parseJsonInput(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const pos = /position (\d+)/.exec(message);
    const offset = pos ? Number(pos[1]) : text.length;
    const line = text.slice(0, offset).split('\n').length;
    const lineText = text.split('\n')[line - 1] ?? '';
    throw new ParseError(`${what} is not valid JSON: ${message}`, line, lineText);
  }
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
