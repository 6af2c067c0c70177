/** The sizing table in README's operator's guide is the code's, not a second copy that drifts. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../base/paths.ts';
import { SEAT_CLUSTER_MEMORY_BYTES } from '../base/versions.ts';
import { seatSizing, seatTotals } from './seat-sizing.ts';

describe('seat sizing', () => {
  it('asks dind for dplab doctor’s memory per cluster, times the clusters a seat may run', () => {
    for (const n of [1, 2, 3]) {
      expect(seatSizing(n).dind.requests.memory).toBe(`${(n * SEAT_CLUSTER_MEMORY_BYTES) / 1024 ** 2}Mi`);
    }
    expect(seatSizing(0)).toEqual(seatSizing(1));
  });

  it('README’s operator’s guide shows the same figures', () => {
    const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');
    for (const n of [1, 2]) {
      const s = seatSizing(n);
      const t = seatTotals(s);
      const row = `| ${n} | ${t.cpuRequestMilli}m / ${t.cpuLimitMilli}m | ${t.memoryRequestMi}Mi / ${t.memoryLimitMi}Mi | ${s.dockerStorage} |`;
      expect(readme).toContain(row);
    }
    const one = seatTotals(seatSizing(1));
    expect(readme).toContain(
      `A class of 30 with one cluster each asks for ${(30 * one.cpuRequestMilli) / 1000} CPUs and ${(30 * one.memoryRequestMi) / 1024} GiB`,
    );
  });
});
