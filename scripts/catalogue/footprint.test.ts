/** Memory figures in words, from CLUSTER_FOOTPRINT only. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../base/paths.ts';
import { CLUSTER_FOOTPRINT } from './modes.ts';
import { clusterMemoryText, clustersMemoryBytes, gib } from './footprint.ts';

describe('footprint', () => {
  it('says whole GiB without decimals', () => {
    expect(gib(2 * 1024 ** 3)).toBe('2 GiB');
    expect(gib(1.5 * 1024 ** 3)).toBe('1.5 GiB');
  });

  it('names the common figure and the modes that differ, from the table', () => {
    const kp = gib(CLUSTER_FOOTPRINT.iptables.memoryBytes);
    expect(clusterMemoryText(['iptables', 'ipvs'])).toBe(`about ${kp}`);
    expect(clusterMemoryText(['iptables', 'ipvs', 'nftables', 'cilium'])).toBe(
      `about ${kp} (Cilium eBPF ${gib(CLUSTER_FOOTPRINT.cilium.memoryBytes)})`,
    );
    expect(clusterMemoryText(['cilium'])).toBe(`about ${gib(CLUSTER_FOOTPRINT.cilium.memoryBytes)}`);
  });

  it('adds the modes up', () => {
    expect(clustersMemoryBytes(['iptables', 'cilium'])).toBe(CLUSTER_FOOTPRINT.iptables.memoryBytes + CLUSTER_FOOTPRINT.cilium.memoryBytes);
  });
});

it('the README says the same figures as the table', () => {
  const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8').replace(/\s+/g, ' ');
  expect(readme).toContain(
    `About ${gib(CLUSTER_FOOTPRINT.iptables.memoryBytes)} of free memory per running cluster (${gib(CLUSTER_FOOTPRINT.cilium.memoryBytes)} for Cilium)`,
  );
});
