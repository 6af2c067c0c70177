import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { labsDir } from '../../base/paths.ts';
import { syncTime } from './scale.ts';

describe('syncTime', () => {
  it("reads kube-proxy v1.35's ip_family-labelled series (recorded on the sim provider), summed over families", () => {
    const file = JSON.parse(readFileSync(join(labsDir, 'scale-compare/observations/hundred.solved.iptables.sim.json'), 'utf8')) as {
      observations: { scale: { syncMetrics: string } };
    };
    const text = file.observations.scale.syncMetrics;
    expect(text).toMatch(/ip_family="IPv4"/);
    const s = syncTime(text);
    expect(s).not.toBeNull();
    const count = Number(/_count\{ip_family="IPv4"\} (\S+)/.exec(text)![1]);
    expect(s!.syncs).toBe(count + Number(/_count\{ip_family="IPv6"\} (\S+)/.exec(text)?.[1] ?? 0));
    expect(s!.averageMs).toBeGreaterThan(0);
  });

  it('still reads unlabelled series (kube-proxy before 1.33)', () => {
    const text = [
      'kubeproxy_sync_proxy_rules_duration_seconds_bucket{le="0.001"} 0',
      'kubeproxy_sync_proxy_rules_duration_seconds_bucket{le="0.004"} 9',
      'kubeproxy_sync_proxy_rules_duration_seconds_bucket{le="+Inf"} 10',
      'kubeproxy_sync_proxy_rules_duration_seconds_sum 0.02',
      'kubeproxy_sync_proxy_rules_duration_seconds_count 10',
    ].join('\n');
    expect(syncTime(text)).toEqual({ syncs: 10, totalSeconds: 0.02, averageMs: 2, p90Ms: 4 });
  });
});
