import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OutputBatcher } from './batch.ts';

const WINDOW_MS = 4;
const MAX = 1000;
const AFTER_INPUT_MS = 20;

function sink() {
  const frames: string[] = [];
  const batcher = new OutputBatcher((f) => frames.push(f.toString()), MAX, WINDOW_MS, AFTER_INPUT_MS);
  return { frames, batcher };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('output batching', () => {
  it('sends a lone chunk (a keystroke echo) at once, without waiting for the timer', () => {
    const { frames, batcher } = sink();
    batcher.push(Buffer.from('x'));
    expect(frames).toEqual(['x']);
    // And again after a quiet window: idle means immediate.
    vi.advanceTimersByTime(WINDOW_MS);
    batcher.push(Buffer.from('y'));
    expect(frames).toEqual(['x', 'y']);
  });

  it('coalesces chunks that keep coming into one frame per window, in order', () => {
    const { frames, batcher } = sink();
    batcher.push(Buffer.from('a'));
    for (let i = 0; i < 50; i++) batcher.push(Buffer.from(`${i},`));
    expect(frames).toEqual(['a']);
    expect(batcher.waiting).toBeGreaterThan(0);
    vi.advanceTimersByTime(WINDOW_MS);
    expect(frames).toHaveLength(2);
    expect(frames.join('')).toBe(`a${Array.from({ length: 50 }, (_, i) => `${i},`).join('')}`);
    // Still busy: the next chunk waits for the window that the flush opened.
    batcher.push(Buffer.from('z'));
    expect(frames).toHaveLength(2);
    vi.advanceTimersByTime(WINDOW_MS);
    expect(frames.at(-1)).toBe('z');
    // A window with nothing in it ends the busy spell.
    vi.advanceTimersByTime(WINDOW_MS);
    batcher.push(Buffer.from('!'));
    expect(frames.at(-1)).toBe('!');
  });

  it('sends at once when a frame is full, before the window ends', () => {
    const { frames, batcher } = sink();
    batcher.push(Buffer.from('first'));
    const chunk = Buffer.alloc(300, 'q');
    for (let i = 0; i < 4; i++) batcher.push(chunk);
    // 1200 bytes waiting passed MAX at the fourth chunk: one full frame went out.
    expect(frames).toHaveLength(2);
    expect(frames[1]).toHaveLength(1200);
    expect(batcher.waiting).toBe(0);
  });

  it('flush() sends what waits (before the exit frame); close() drops it and ignores later output', () => {
    const { frames, batcher } = sink();
    batcher.push(Buffer.from('a'));
    batcher.push(Buffer.from('b'));
    batcher.flush();
    expect(frames).toEqual(['a', 'b']);
    batcher.push(Buffer.from('c'));
    batcher.close();
    batcher.push(Buffer.from('d'));
    vi.runAllTimers();
    expect(frames).toEqual(['a', 'b']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('after input, sends what was gathered and then every chunk at once, until the moment passes', () => {
    const { frames, batcher } = sink();
    // A flood: busy, gathering.
    batcher.push(Buffer.from('y\n'));
    batcher.push(Buffer.from('y\ny\n'));
    expect(frames).toEqual(['y\n']);
    // Ctrl-C reaches the shell: the gathered output goes now, ahead of the answer.
    batcher.inputArrived();
    expect(frames).toEqual(['y\n', 'y\ny\n']);
    batcher.push(Buffer.from('^C\r\n'));
    batcher.push(Buffer.from('$ '));
    expect(frames).toEqual(['y\n', 'y\ny\n', '^C\r\n', '$ ']);
    expect(batcher.waiting).toBe(0);
    // Once the moment after input has passed, a busy batcher gathers again.
    vi.advanceTimersByTime(AFTER_INPUT_MS);
    batcher.push(Buffer.from('a'));
    batcher.push(Buffer.from('b'));
    expect(frames.slice(4).join('')).not.toContain('b');
    vi.advanceTimersByTime(WINDOW_MS);
    expect(frames.slice(4).join('')).toBe('ab');
  });

  it('ignores input after close', () => {
    const { frames, batcher } = sink();
    batcher.push(Buffer.from('a'));
    batcher.close();
    batcher.inputArrived();
    batcher.push(Buffer.from('b'));
    expect(frames).toEqual(['a']);
  });
});
