import { describe, expect, it } from 'vitest';
import { NODES_NOT_COUNTED, nodeCountText } from './node-count.ts';

describe('nodeCountText', () => {
  it('counts the nodes it saw', () => {
    expect(nodeCountText({ nodes: 3, readyNodes: 3 })).toBe('3/3 nodes Ready');
    expect(nodeCountText({ nodes: 3, readyNodes: 2 })).toBe('2/3 nodes Ready');
  });

  it('never says "0/0 nodes Ready": a count of none is a count not made', () => {
    const text = nodeCountText({ nodes: 0, readyNodes: 0 });
    expect(text).toBe(NODES_NOT_COUNTED);
    expect(text).not.toMatch(/0\/0/);
  });
});
