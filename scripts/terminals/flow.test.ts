import { describe, expect, it } from 'vitest';
import { FlowController } from './flow.ts';
import { FLOW } from './protocol.ts';

function target() {
  const calls: string[] = [];
  return { calls, pause: () => calls.push('pause'), resume: () => calls.push('resume') };
}

describe('flow control by acknowledged bytes', () => {
  it('pauses above the high watermark and resumes below the low one, once each', () => {
    const t = target();
    const flow = new FlowController(t, 100, 20);
    flow.onSent(60);
    flow.onSent(60);
    expect(t.calls).toEqual(['pause']);
    flow.onSent(10);
    expect(t.calls).toEqual(['pause']);
    flow.onAck(50);
    expect(flow.isPaused).toBe(true);
    flow.onAck(120);
    expect(t.calls).toEqual(['pause', 'resume']);
    expect(flow.unacknowledged).toBe(10);
  });
  it('ignores acks that go backwards or beyond what was sent', () => {
    const t = target();
    const flow = new FlowController(t, 100, 20);
    flow.onSent(50);
    flow.onAck(1_000_000);
    expect(flow.unacknowledged).toBe(0);
    flow.onSent(150);
    flow.onAck(10);
    expect(flow.unacknowledged).toBe(150);
    expect(t.calls).toEqual(['pause']);
  });
  it('resumes a paused shell once a page that acks every FLOW.ackEvery bytes has drawn what it got', () => {
    const t = target();
    const flow = new FlowController(t);
    let sent = 0;
    let drawn = 0;
    let acked = 0;
    for (let round = 0; round < 20; round++) {
      // The shell floods until it is paused…
      while (!flow.isPaused) {
        flow.onSent(FLOW.batchMaxBytes);
        sent += FLOW.batchMaxBytes;
      }
      // …and the page draws all of it, acking as terminal-element.ts does.
      while (drawn < sent) {
        drawn += 4096;
        if (drawn - acked >= FLOW.ackEvery) {
          acked = drawn;
          flow.onAck(acked);
        }
      }
      expect(flow.isPaused, `round ${round}: ${sent - acked} bytes drawn but not acked`).toBe(false);
    }
    expect(t.calls.filter((c) => c === 'resume')).toHaveLength(20);
  });
});
