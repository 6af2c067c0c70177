import { describe, expect, it } from 'vitest';
import { checkSeatCapacity, seatNeed, seatsThatFit } from './capacity.ts';
import { SEAT_RUNNER_MEMORY_BYTES } from '../base/versions.ts';
import { CLUSTER_FOOTPRINT } from '../catalogue/modes.ts';
import { fakeSystem } from '../../test/fixtures/cluster-scenarios.ts';

const GiB = 1024 ** 3;

describe('room for workshop seats', () => {
  it('adds a runner and one cluster per mode for each seat, from the one table', () => {
    expect(seatNeed(10, ['iptables'])).toEqual({
      memoryBytes: 10 * (CLUSTER_FOOTPRINT.iptables.memoryBytes + SEAT_RUNNER_MEMORY_BYTES),
      cpus: 20,
    });
    expect(seatNeed(2, ['iptables', 'cilium']).cpus).toBe(2 * (CLUSTER_FOOTPRINT.iptables.cpus + CLUSTER_FOOTPRINT.cilium.cpus));
  });
  it('the smaller of memory and CPUs decides how many fit', () => {
    expect(seatsThatFit(64 * GiB, 8, ['iptables'])).toBe(4);
    // 2 GiB + 200 MiB a seat: 8 GiB holds three.
    expect(seatsThatFit(8 * GiB, 64, ['iptables'])).toBe(3);
  });
  it('30 iptables seats on a 24 GiB, 2-CPU host: memory short by far is a failure with the number that fits', () => {
    const f = checkSeatCapacity(fakeSystem({ memAvailableBytes: () => 24 * GiB, cpuCount: () => 2 }), 30, ['iptables']);
    expect(f.status).toBe('fail');
    expect(f.detail).toBe(
      '30 seats with one iptables cluster each need about 65.9 GiB and 60 CPUs; this host has 24.0 GiB available and 2 CPUs.',
    );
    expect(f.fix).toContain('--max-seats 1');
  });
  it('a big VM passes, and short only of CPUs is a warning', () => {
    expect(checkSeatCapacity(fakeSystem({ memAvailableBytes: () => 512 * GiB, cpuCount: () => 64 }), 30, ['iptables']).status).toBe('ok');
    expect(checkSeatCapacity(fakeSystem({ memAvailableBytes: () => 512 * GiB, cpuCount: () => 16 }), 30, ['iptables']).status).toBe('warn');
  });
});
