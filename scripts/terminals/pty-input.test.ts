import { afterEach, describe, expect, it, vi } from 'vitest';
import { PtyInput, PTY_INPUT } from './pty-input.ts';

/** A pty whose input queue takes `room` bytes until drained, then EAGAIN: the kernel's answer. */
function fakePty(room: number) {
  const got: Buffer[] = [];
  let free = room;
  let calls = 0;
  return {
    got,
    get calls() {
      return calls;
    },
    drain(n: number) {
      free += n;
    },
    writeSome: (_fd: number, buf: Buffer) => {
      calls++;
      if (free === 0) throw Object.assign(new Error('EAGAIN'), { code: 'EAGAIN' });
      const n = Math.min(free, buf.length);
      free -= n;
      got.push(Buffer.from(buf.subarray(0, n)));
      return n;
    },
  };
}

afterEach(() => vi.useRealTimers());

describe('PtyInput', () => {
  it('writes what fits, queues the rest, and delivers it all in order as the pty drains', () => {
    vi.useFakeTimers();
    const pty = fakePty(1000);
    const input = new PtyInput(3, { writeSome: pty.writeSome });
    const text = Array.from({ length: 5000 }, (_, i) => `${i}\r`).join('');
    input.write(text);
    expect(Buffer.concat(pty.got).length).toBe(1000);
    expect(input.queued).toBe(Buffer.byteLength(text) - 1000);
    while (input.queued > 0) {
      pty.drain(700);
      vi.advanceTimersByTime(PTY_INPUT.maxRetryMs);
    }
    expect(Buffer.concat(pty.got).toString()).toBe(text);
  });

  it('backs off while the pty stays full instead of retrying every turn', () => {
    vi.useFakeTimers();
    const pty = fakePty(0);
    const input = new PtyInput(3, { writeSome: pty.writeSome });
    input.write('x'.repeat(10));
    vi.advanceTimersByTime(1000);
    // Doubling from minRetryMs to maxRetryMs: a few dozen attempts a second, not thousands.
    expect(pty.calls).toBeLessThan(1000 / PTY_INPUT.maxRetryMs + 10);
    pty.drain(10);
    vi.advanceTimersByTime(PTY_INPUT.maxRetryMs);
    expect(Buffer.concat(pty.got).toString()).toBe('x'.repeat(10));
  });

  it('writes at most bytesPerTurn in one turn, so a paste yields to the event loop', () => {
    vi.useFakeTimers();
    const pty = fakePty(Number.MAX_SAFE_INTEGER);
    const input = new PtyInput(3, { writeSome: pty.writeSome });
    input.write('y'.repeat(PTY_INPUT.bytesPerTurn * 3));
    expect(Buffer.concat(pty.got).length).toBe(PTY_INPUT.bytesPerTurn);
    vi.advanceTimersByTime(10);
    expect(input.queued).toBe(0);
  });

  it('keeps multi-byte characters intact across partial writes', () => {
    vi.useFakeTimers();
    const pty = fakePty(5);
    const input = new PtyInput(3, { writeSome: pty.writeSome });
    const text = 'héllo wörld ✓ 🚀'.repeat(50);
    input.write(text);
    while (input.queued > 0) {
      pty.drain(3);
      vi.advanceTimersByTime(PTY_INPUT.maxRetryMs);
    }
    expect(Buffer.concat(pty.got).toString('utf8')).toBe(text);
  });

  it('discard() drops what is queued and says how much', () => {
    vi.useFakeTimers();
    const pty = fakePty(4);
    const input = new PtyInput(3, { writeSome: pty.writeSome });
    input.write('abcdefgh');
    expect(input.discard()).toBe(4);
    input.write('\x03');
    pty.drain(10);
    vi.advanceTimersByTime(PTY_INPUT.maxRetryMs);
    expect(Buffer.concat(pty.got).toString()).toBe('abcd\x03');
  });

  it('stops on EIO (the shell is gone) and after close()', () => {
    const input = new PtyInput(3, {
      writeSome: () => {
        throw Object.assign(new Error('EIO'), { code: 'EIO' });
      },
    });
    input.write('a');
    expect(input.queued).toBe(0);
    input.write('b');
    expect(input.queued).toBe(0);
    input.close();
    input.close();
  });
});
