// The browser offers a trace where the wire says a mode has one (scripts/wire/trace-modes.ts);
// the runner traces where methods.ts has one. The two lists must be the same, and every other
// mode must say why it has none.
import { describe, expect, it } from 'vitest';
import { MODES } from '../../wire/modes.ts';
import { NO_TRACE_BECAUSE, TRACE_METHOD_OF } from '../../wire/trace-modes.ts';
import { TRACE_METHOD } from './methods.ts';

describe('trace modes', () => {
  it('the wire names the method each traced mode uses', () => {
    const ids = Object.fromEntries(Object.entries(TRACE_METHOD).map(([mode, m]) => [mode, m.id]));
    expect(TRACE_METHOD_OF).toEqual(ids);
  });

  it('every mode without a method says why', () => {
    for (const mode of MODES) expect(Boolean(TRACE_METHOD_OF[mode]) !== Boolean(NO_TRACE_BECAUSE[mode]), mode).toBe(true);
  });
});
