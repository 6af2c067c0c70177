// The live suite's promise, checked without Docker: it never deletes a cluster it did not create.
import { describe, expect, it } from 'vitest';
import { mayDelete, modeSkip } from './live/ownership.ts';

describe('live suite ownership', () => {
  const userHad = new Set(['dplab-ipvs', 'kind']);

  it("a user's dplab cluster is skipped, with the reason, and never deleted", () => {
    expect(modeSkip('ipvs', userHad, false)).toMatch(/^dplab-ipvs existed before the suite started/);
    expect(mayDelete('ipvs', userHad)).toBe(false);
  });

  it('with DPLAB_LIVE_REUSE=1 the labs run on it, still without deleting it', () => {
    expect(modeSkip('ipvs', userHad, true)).toBeUndefined();
    expect(mayDelete('ipvs', userHad)).toBe(false);
  });

  it('a cluster the suite creates is its own to delete', () => {
    expect(modeSkip('iptables', userHad, false)).toBeUndefined();
    expect(mayDelete('iptables', userHad)).toBe(true);
  });
});
