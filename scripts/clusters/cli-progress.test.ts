/**
 * `dplab up`'s terminal progress with an action running beside the others (the image load beside
 * the waits): the spinner names the action started last and counts the rest; each end is its own line.
 */
import { describe, expect, it } from 'vitest';
import { progressPrinter } from './cli-progress.ts';
import type { ClusterEvent } from './events.ts';

const action = (id: string, title: string, phase: 'start' | 'end' | 'fail', at: number, elapsedMs?: number): ClusterEvent => ({
  type: 'action',
  mode: 'iptables',
  runId: 'r1',
  id,
  title,
  phase,
  at,
  ...(elapsedMs === undefined ? {} : { elapsedMs }),
});

function capture(isTTY: boolean) {
  let text = '';
  return { out: { isTTY, write: (t: string) => (text += t) }, text: () => text };
}

/** What a terminal shows: each line after its last carriage return, escape codes dropped. */
const screen = (text: string) =>
  text
    .split('\n')
    .map((l) => l.split('\r').at(-1)!.replaceAll('\x1b[2K', ''))
    .filter(Boolean);

describe('progressPrinter', () => {
  it('on a terminal: the last started action spins with a count of the others; ends print in the order they happen', () => {
    const c = capture(true);
    const p = progressPrinter(c.out);
    const now = Date.now();
    p.onEvent(action('images', 'Load lab images into the nodes', 'start', now));
    p.onEvent(action('nodes-ready', 'Wait for the nodes to be Ready', 'start', now));
    expect(screen(c.text()).at(-1)).toMatch(/^. Wait for the nodes to be Ready \(\d+ ms\) \+ 1 more running$/);
    p.onEvent(action('nodes-ready', 'Wait for the nodes to be Ready', 'end', now, 9_700));
    // The ended one has its line; the one still running spins on the next, alone.
    expect(screen(c.text()).slice(-2)).toEqual([
      '✓ Wait for the nodes to be Ready (9.7 s)',
      expect.stringMatching(/^. Load lab images into the nodes \(\d+ ms\)$/),
    ]);
    p.onEvent(action('images', 'Load lab images into the nodes', 'fail', now, 2_000));
    p.dispose();
    expect(screen(c.text()).at(-1)).toBe('✗ Load lab images into the nodes (2.0 s)');
  });

  it('in a log: one line per start and one per end, whatever runs beside', () => {
    const c = capture(false);
    const p = progressPrinter(c.out);
    p.onEvent(action('images', 'Load lab images into the nodes', 'start', 0));
    p.onEvent(action('nodes-ready', 'Wait for the nodes to be Ready', 'start', 0));
    p.onEvent(action('images', 'Load lab images into the nodes', 'end', 0, 13_000));
    p.onEvent(action('nodes-ready', 'Wait for the nodes to be Ready', 'end', 0, 14_200));
    p.dispose();
    expect(c.text()).toBe(
      [
        '→ Load lab images into the nodes',
        '→ Wait for the nodes to be Ready',
        '✓ Load lab images into the nodes (13 s)',
        '✓ Wait for the nodes to be Ready (14 s)',
        '',
      ].join('\n'),
    );
  });
});
