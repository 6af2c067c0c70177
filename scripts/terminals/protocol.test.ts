import { describe, expect, it } from 'vitest';
import { parseClientMessage, sizeFromQuery, splitInput, TERMINAL_LIMITS } from './protocol.ts';

describe('client message validation', () => {
  it('accepts the three message types', () => {
    expect(parseClientMessage('{"type":"input","data":"ls\\r"}')).toEqual({ ok: true, value: { type: 'input', data: 'ls\r' } });
    expect(parseClientMessage('{"type":"resize","cols":120,"rows":40}')).toEqual({
      ok: true,
      value: { type: 'resize', cols: 120, rows: 40 },
    });
    expect(parseClientMessage('{"type":"ack","bytes":4096}')).toEqual({ ok: true, value: { type: 'ack', bytes: 4096 } });
  });
  it.each([
    ['not json', 'not valid JSON'],
    ['[1,2]', 'JSON object'],
    ['null', 'JSON object'],
    ['"input"', 'JSON object'],
    ['{"type":"exec","cmd":"rm -rf /"}', 'Unknown control message type "exec"'],
    ['{"data":"x"}', 'Unknown control message type undefined'],
    ['{"type":"input","data":42}', 'input.data must be a string'],
    ['{"type":"resize","cols":100000,"rows":40}', 'resize needs integer cols'],
    ['{"type":"resize","cols":-1,"rows":40}', 'resize needs integer cols'],
    ['{"type":"resize","cols":80.5,"rows":40}', 'resize needs integer cols'],
    ['{"type":"resize","cols":"80","rows":40}', 'resize needs integer cols'],
    ['{"type":"resize","cols":80,"rows":0}', 'resize needs integer cols'],
    ['{"type":"ack","bytes":-5}', 'ack.bytes must be'],
  ])('refuses %s with a clear error', (text, error) => {
    const r = parseClientMessage(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(error);
  });
  it('refuses oversized input', () => {
    const r = parseClientMessage(JSON.stringify({ type: 'input', data: 'x'.repeat(TERMINAL_LIMITS.maxInputChars + 1) }));
    expect(r.ok).toBe(false);
  });
  it('takes the initial size from the query, falling back on absurd values', () => {
    expect(sizeFromQuery(new URLSearchParams('cols=100&rows=30'))).toEqual({ cols: 100, rows: 30 });
    expect(sizeFromQuery(new URLSearchParams('cols=99999&rows=30'))).toEqual({ cols: 80, rows: 24 });
    expect(sizeFromQuery(new URLSearchParams(''))).toEqual({ cols: 80, rows: 24 });
  });
});

describe('splitInput', () => {
  it('splits a paste into message-sized pieces that join back to it', () => {
    const text = 'line of a manifest\r'.repeat(10_000);
    const pieces = splitInput(text, 1000);
    expect(pieces.every((p) => p.length <= 1000)).toBe(true);
    expect(pieces.join('')).toBe(text);
  });
  it('never cuts a surrogate pair in two', () => {
    const text = `${'a'.repeat(999)}🚀${'b'.repeat(10)}`;
    const pieces = splitInput(text, 1000);
    expect(pieces[0]).toBe('a'.repeat(999));
    expect(pieces.join('')).toBe(text);
    expect(pieces.every((p) => Buffer.from(p, 'utf8').toString('utf8') === p)).toBe(true);
  });
  it('leaves short input as one message', () => expect(splitInput('ls\r')).toEqual(['ls\r']));
});
