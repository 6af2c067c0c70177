import { describe, expect, it } from 'vitest';
import { FlowController } from './flow.ts';

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
});
