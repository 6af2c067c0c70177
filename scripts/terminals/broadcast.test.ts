/**
 * The broadcast's bookkeeping without sockets: which terminal watchers see, the screen a late
 * watcher gets first, bounded memory, and a slow watcher skipping output instead of holding
 * the terminal back.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TerminalBroadcast, WATCH_LIMITS, type WatchTarget } from './broadcast.ts';
import { REPLAY_BYTES, ReplayBuffer } from './replay.ts';
import type { ServerMessage } from '../wire/terminal.ts';

class FakeWatcher implements WatchTarget {
  frames: Array<ServerMessage | string> = [];
  buffered = 0;
  control(msg: ServerMessage): void {
    this.frames.push(msg);
  }
  output(chunk: Buffer): void {
    this.frames.push(chunk.toString());
  }
  text(): string {
    return this.frames.filter((f): f is string => typeof f === 'string').join('');
  }
  mirrors(): Array<string | null> {
    return this.frames.flatMap((f) => (typeof f !== 'string' && f.type === 'mirror' ? [f.terminal] : []));
  }
  notices(): string[] {
    return this.frames.flatMap((f) => (typeof f !== 'string' && f.type === 'notice' ? [f.message] : []));
  }
}

const shell = { mode: 'iptables', node: null, cols: 100, rows: 30 };

afterEach(() => vi.useRealTimers());

describe('replay buffer', () => {
  it('keeps the newest bytes, never more than its size', () => {
    const r = new ReplayBuffer(10);
    r.push(Buffer.from('abcdef'));
    r.push(Buffer.from('ghijkl'));
    expect(r.contents().toString()).toBe('cdefghijkl');
    r.push(Buffer.from('0123456789XYZ'));
    expect(r.contents().toString()).toBe('3456789XYZ');
    expect(r.bytes).toBe(10);
  });
  it('holds 256 KiB after megabytes of output', () => {
    const r = new ReplayBuffer();
    for (let i = 0; i < 1000; i++) r.push(Buffer.alloc(4096, i % 256));
    expect(r.bytes).toBe(REPLAY_BYTES);
    expect(r.contents().at(-1)).toBe(999 % 256);
  });
});

describe('terminal broadcast', () => {
  it('a late watcher gets the current screen first, then live output', () => {
    const b = new TerminalBroadcast();
    const t = b.register(shell);
    t.output(Buffer.from('$ echo before\r\nbefore\r\n'));
    const w = new FakeWatcher();
    b.watch(w);
    expect(w.frames[0]).toEqual({ type: 'mirror', terminal: t.id, mode: 'iptables', node: null, cols: 100, rows: 30 });
    expect(w.text()).toBe('$ echo before\r\nbefore\r\n');
    t.output(Buffer.from('after'));
    expect(w.text()).toMatch(/after$/);
    t.resize(120, 40);
    expect(w.frames.at(-1)).toEqual({ type: 'resize', cols: 120, rows: 40 });
  });

  it('follows the most recently opened learner shell, not node shells, unless one is pinned', () => {
    const b = new TerminalBroadcast();
    const w = new FakeWatcher();
    b.watch(w);
    expect(w.mirrors()).toEqual([null]);
    expect(w.notices()[0]).toMatch(/no terminal open yet/);
    const first = b.register(shell);
    const node = b.register({ ...shell, node: 'dplab-iptables-worker' });
    expect(b.state().terminal).toBe(first.id);
    const second = b.register(shell);
    expect(w.mirrors()).toEqual([null, first.id, second.id]);
    first.output(Buffer.from('from-first'));
    expect(w.text()).not.toContain('from-first');
    expect(b.pin(node.id)).toBe(true);
    expect(b.state()).toMatchObject({ terminal: node.id, pinned: true, watchers: 1 });
    expect(b.pin('t999')).toBe(false);
    node.end();
    // The pinned shell ended: back to following the newest learner shell.
    expect(b.state()).toMatchObject({ terminal: second.id, pinned: false });
    second.end();
    first.end();
    expect(w.mirrors().at(-1)).toBeNull();
    expect(b.state().terminals).toEqual([]);
  });

  it('a slow watcher skips output, is told how much, and gets the screen again; others are not held back', () => {
    vi.useFakeTimers();
    const b = new TerminalBroadcast();
    const t = b.register(shell);
    const slow = new FakeWatcher();
    const fast = new FakeWatcher();
    b.watch(slow);
    b.watch(fast);
    slow.buffered = WATCH_LIMITS.maxBufferedBytes + 1;
    for (let i = 0; i < 100; i++) t.output(Buffer.from(`line ${i}\r\n`));
    expect(fast.text()).toContain('line 99');
    expect(slow.text()).toBe('');
    vi.advanceTimersByTime(WATCH_LIMITS.drainCheckMs * 3);
    expect(slow.notices()).toEqual([]);
    slow.buffered = 0;
    vi.advanceTimersByTime(WATCH_LIMITS.drainCheckMs);
    const skipped = [...Array(100).keys()].reduce((n, i) => n + `line ${i}\r\n`.length, 0);
    expect(slow.notices()).toEqual([expect.stringContaining(`Skipped ${skipped} bytes`)]);
    expect(slow.mirrors()).toEqual([t.id, t.id]);
    expect(slow.text()).toContain('line 99');
    t.output(Buffer.from('live again'));
    expect(slow.text()).toMatch(/live again$/);
  });

  it('serves at most WATCH_LIMITS.maxWatchers at once', () => {
    const b = new TerminalBroadcast();
    const handles = Array.from({ length: WATCH_LIMITS.maxWatchers }, () => b.watch(new FakeWatcher()));
    expect(handles.every(Boolean)).toBe(true);
    expect(b.watch(new FakeWatcher())).toBeNull();
    handles[0]!.close();
    expect(b.watch(new FakeWatcher())).not.toBeNull();
  });
});
