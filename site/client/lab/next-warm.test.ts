import { describe, expect, it } from 'vitest';
import { askAhead, nextWarmTarget, type UpcomingLab } from './next-warm.ts';
import type { ClusterWarm } from '../../../scripts/wire/clusters.ts';
import { labsAfter } from '../../course/course.ts';

const lab = (id: string, ...modes: string[]): UpcomingLab => ({ id, title: `Lab ${id}`, modes });
const none = () => 'none' as const;

describe('nextWarmTarget', () => {
  it('skips labs on this page’s mode and takes the first on another', () => {
    const t = nextWarmTarget([lab('a', 'iptables'), lab('b', 'nftables'), lab('c', 'cilium')], 'iptables', none);
    expect(t).toEqual({ lab: lab('b', 'nftables'), mode: 'nftables', startedAhead: false });
  });

  it('skips a lab whose cluster exists already, and looks further', () => {
    const t = nextWarmTarget([lab('b', 'nftables'), lab('c', 'cilium')], 'iptables', (m) => (m === 'nftables' ? 'other' : 'none'));
    expect(t?.mode).toBe('cilium');
  });

  it('stops at a cluster already started ahead, and says so (after a reload the page shows it again, and asks nothing)', () => {
    const t = nextWarmTarget([lab('b', 'nftables'), lab('c', 'cilium')], 'iptables', (m) => (m === 'nftables' ? 'ahead' : 'none'));
    expect(t).toEqual({ lab: lab('b', 'nftables'), mode: 'nftables', startedAhead: true });
  });

  it('a lab opens on the mode the learner chose for it, else its first; a choice it does not offer is ignored', () => {
    const upcoming = [lab('b', 'iptables', 'nftables')];
    expect(nextWarmTarget(upcoming, 'iptables', none)).toBeUndefined();
    expect(nextWarmTarget(upcoming, 'iptables', none, () => 'nftables')?.mode).toBe('nftables');
    expect(nextWarmTarget(upcoming, 'iptables', none, () => 'ipvs')).toBeUndefined();
  });

  it('nothing after the last lab, or when every later mode has its cluster', () => {
    expect(nextWarmTarget([], 'iptables', none)).toBeUndefined();
    expect(nextWarmTarget([lab('b', 'nftables')], 'iptables', () => 'other')).toBeUndefined();
  });

  it('reads the course’s own order: the labs after one are the course’s labs after it', () => {
    const after = labsAfter('first-service');
    expect(after.length).toBeGreaterThan(0);
    expect(after.map((l) => l.id)).not.toContain('first-service');
    const t = nextWarmTarget(after, 'iptables', none);
    expect(t).toBeDefined();
    expect(t!.lab.modes[0]).toBe(t!.mode);
    expect(t!.mode).not.toBe('iptables');
  });
});

describe('askAhead', () => {
  const upcoming = [lab('b', 'ipvs'), lab('c', 'iptables'), lab('d', 'nftables'), lab('e', 'cilium')];
  const warming = (mode: string): ClusterWarm => ({
    outcome: 'warming',
    mode: mode as never,
    message: 'Starting',
    events: '/api/clusters/events',
  });
  const declined = (mode: string, reason: 'host' | 'memory'): ClusterWarm => ({
    outcome: 'declined',
    mode: mode as never,
    reason,
    message: `The ${mode} cluster cannot start here.`,
  });
  /** A runner that says `reason` for the modes in `no`, and starts any other; it records what it was asked. */
  const runner = (no: Record<string, 'host' | 'memory'>) => {
    const asked: string[] = [];
    return { asked, ask: async (m: string) => (asked.push(m), no[m] ? declined(m, no[m]) : warming(m)) };
  };

  it('passes over a mode this host cannot start for the next lab on another mode, and remembers it', async () => {
    const r = runner({ ipvs: 'host' });
    const cannot = new Set<string>();
    const got = await askAhead(upcoming, 'iptables', none, () => undefined, cannot, r.ask);
    expect(got).toEqual({
      kind: 'asked',
      target: { lab: upcoming[2], mode: 'nftables', startedAhead: false },
      answer: warming('nftables'),
    });
    expect(r.asked).toEqual(['ipvs', 'nftables']);
    expect([...cannot]).toEqual(['ipvs']);
    // Asked again on the same page (Turn it on): the mode the host cannot start is not asked again.
    const again = runner({ ipvs: 'host' });
    await askAhead(upcoming, 'iptables', none, () => undefined, cannot, again.ask);
    expect(again.asked).toEqual(['nftables']);
  });

  it('when no lab ahead can start here, says why for the first one, asking each mode once', async () => {
    const r = runner({ ipvs: 'host', nftables: 'host', cilium: 'host' });
    const got = await askAhead(upcoming, 'iptables', none, () => undefined, new Set(), r.ask);
    expect(got).toEqual({ kind: 'none', cannotStart: 'The ipvs cluster cannot start here.' });
    expect(r.asked).toEqual(['ipvs', 'nftables', 'cilium']);
  });

  it('any other decline is the answer: too little memory for one cluster is too little for the next', async () => {
    const r = runner({ ipvs: 'memory' });
    const got = await askAhead(upcoming, 'iptables', none, () => undefined, new Set(), r.ask);
    expect(got).toMatchObject({ kind: 'asked', target: { mode: 'ipvs' }, answer: { outcome: 'declined', reason: 'memory' } });
    expect(r.asked).toEqual(['ipvs']);
  });

  it('a cluster already started ahead is shown, not asked for; no lab ahead asks nothing', async () => {
    const r = runner({});
    expect(
      await askAhead(
        upcoming,
        'iptables',
        (m) => (m === 'ipvs' ? 'ahead' : 'none'),
        () => undefined,
        new Set(),
        r.ask,
      ),
    ).toEqual({
      kind: 'ahead',
      target: { lab: upcoming[0], mode: 'ipvs', startedAhead: true },
    });
    expect(await askAhead([], 'iptables', none, () => undefined, new Set(), r.ask)).toEqual({ kind: 'none' });
    expect(r.asked).toEqual([]);
  });
});
