import { describe, expect, it } from 'vitest';
import { nextWarmTarget, type UpcomingLab } from './next-warm.ts';
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
