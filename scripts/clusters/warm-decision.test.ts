import { describe, expect, it } from 'vitest';
import { warmDecision, type WarmFacts } from './warm-decision.ts';
import { MODES, type Mode } from '../catalogue/modes.ts';
import type { ClusterStatus } from '../wire/clusters.ts';
import { fakeSystem } from '../../test/fixtures/cluster-scenarios.ts';

const GiB = 1024 ** 3;

/** The iptables cluster ready (the lab the learner is on), the rest absent, a roomy Linux host. */
function facts(over: Partial<WarmFacts> & { states?: Partial<Record<Mode, ClusterStatus['state']>> } = {}): WarmFacts {
  const states: Record<Mode, ClusterStatus['state']> = {
    iptables: 'ready',
    ipvs: 'absent',
    nftables: 'absent',
    cilium: 'absent',
    ...over.states,
  };
  return {
    mode: 'nftables',
    optedOut: false,
    enabled: true,
    seat: false,
    clusters: async () => MODES.map((mode) => ({ mode, state: states[mode] })),
    system: fakeSystem({ memAvailableBytes: () => 8 * GiB }),
    blocker: async () => undefined,
    ...over,
  };
}

describe('warmDecision', () => {
  it('warms when memory allows one more cluster of that mode, and says the figures', async () => {
    expect(await warmDecision(facts())).toEqual({
      warm: true,
      message: 'Starting the nftables cluster ahead: 8 GiB available; it needs about 2 GiB.',
    });
  });

  it('declines when the learner opted out', async () => {
    expect(await warmDecision(facts({ optedOut: true }))).toMatchObject({ warm: false, reason: 'opted-out' });
  });

  it('declines when the runner was started with --no-warm', async () => {
    const d = await warmDecision(facts({ enabled: false }));
    expect(d).toMatchObject({ warm: false, reason: 'off' });
    expect(d.message).toContain('--no-warm');
  });

  it('declines in a workshop seat, whatever the memory', async () => {
    const d = await warmDecision(facts({ seat: true, system: fakeSystem({ memAvailableBytes: () => 64 * GiB }) }));
    expect(d).toMatchObject({ warm: false, reason: 'seat' });
    expect(d.message).toMatch(/Workshop seats start no cluster ahead/);
  });

  it('declines while another cluster is still starting, naming it', async () => {
    expect(await warmDecision(facts({ states: { iptables: 'provisioning' } }))).toEqual({
      warm: false,
      reason: 'busy',
      message: 'The iptables cluster is still starting; one cluster starts at a time.',
    });
  });

  it('declines when memory does not allow one more cluster, with the doctor’s figures', async () => {
    expect(await warmDecision(facts({ system: fakeSystem({ memAvailableBytes: () => 1.5 * GiB }) }))).toEqual({
      warm: false,
      reason: 'memory',
      message: '1.5 GiB available; the nftables cluster needs about 2 GiB.',
    });
    // Cilium's cluster is bigger: 3.1 GiB is enough for nftables, not for Cilium.
    const small = fakeSystem({ memAvailableBytes: () => 3.1 * GiB });
    expect((await warmDecision(facts({ system: small }))).warm).toBe(true);
    expect(await warmDecision(facts({ mode: 'cilium', system: small }))).toMatchObject({
      reason: 'memory',
      message: '3.1 GiB available; the Cilium eBPF cluster needs about 4 GiB.',
    });
  });

  it('declines when it cannot tell the memory (Docker Desktop without its figures)', async () => {
    const d = await warmDecision(facts({ system: fakeSystem({ platform: 'darwin' }) }));
    expect(d).toMatchObject({ warm: false, reason: 'memory' });
    expect(d.message).toMatch(/^Could not tell how much memory Docker can use; the nftables cluster needs about 2 GiB\.$/);
  });

  it('declines when that cluster already exists, in any state but absent', async () => {
    for (const state of ['ready', 'provisioning', 'broken'] as const) {
      expect(await warmDecision(facts({ states: { nftables: state } }))).toMatchObject({ warm: false, reason: 'exists' });
    }
    expect((await warmDecision(facts({ states: { nftables: 'ready' } }))).message).toBe('The nftables cluster is already running.');
  });

  it('gives the learner’s and the runner’s choices before the cluster facts', async () => {
    const everything = facts({ optedOut: true, enabled: false, seat: true, states: { nftables: 'ready', iptables: 'provisioning' } });
    expect(await warmDecision(everything)).toMatchObject({ reason: 'opted-out' });
    expect(await warmDecision({ ...everything, optedOut: false })).toMatchObject({ reason: 'off' });
    expect(await warmDecision({ ...everything, optedOut: false, enabled: false, seat: true })).toMatchObject({ reason: 'off' });
  });
});

describe('a start that would fail at its first step', () => {
  it('is not tried: the preflight’s first failure is the reason', async () => {
    const blocker = async () =>
      'This kernel (6.1.0) has no ip_vs module to load (not in modules.dep): kube-proxy’s IPVS mode cannot start on it.';
    expect(await warmDecision(facts({ mode: 'ipvs', blocker }))).toEqual({
      warm: false,
      reason: 'host',
      message:
        'The IPVS cluster cannot start here. This kernel (6.1.0) has no ip_vs module to load (not in modules.dep): kube-proxy’s IPVS mode cannot start on it.',
    });
  });
});

describe('what the decision reads', () => {
  it('the host is asked last (it runs docker, kind and kubectl), only when everything else says yes', async () => {
    let asked = 0;
    const counting = { blocker: async () => (asked++, undefined) };
    await warmDecision(facts({ optedOut: true, ...counting }));
    await warmDecision(facts({ states: { nftables: 'ready' }, ...counting }));
    await warmDecision(facts({ system: fakeSystem({ memAvailableBytes: () => 1.5 * GiB }), ...counting }));
    expect(asked).toBe(0);
    expect((await warmDecision(facts(counting))).warm).toBe(true);
    expect(asked).toBe(1);
  });

  it('the clusters are not read when the learner, the runner or the seat already said no', async () => {
    let reads = 0;
    const counting = { clusters: async () => (reads++, []) };
    await warmDecision(facts({ optedOut: true, ...counting }));
    await warmDecision(facts({ enabled: false, ...counting }));
    await warmDecision(facts({ seat: true, ...counting }));
    expect(reads).toBe(0);
    await warmDecision(facts(counting));
    expect(reads).toBe(1);
  });
});
