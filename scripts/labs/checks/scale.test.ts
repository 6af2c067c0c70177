// kube-proxy's sync-time histogram as kube-proxy v1.35 prints it: SyncProxyRulesLatency in
// pkg/proxy/metrics/metrics.go is a HistogramVec with the label ip_family and buckets
// ExponentialBuckets(0.001, 2, 15); the Prometheus text format puts `le` after the other labels.
// The same figures through labs/scale-compare/manifests/sync-time.sh, the terminal's view.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../base/paths.ts';
import { syncTime, SYNC_METRIC } from './scale.ts';

function histogram(family: string | null, counts: number[], sum: number): string {
  const labels = (extra?: string) => {
    const all = [family ? `ip_family="${family}"` : null, extra ?? null].filter(Boolean);
    return all.length ? `{${all.join(',')}}` : '';
  };
  const les = [...Array.from({ length: 15 }, (_, i) => String(0.001 * 2 ** i)), '+Inf'];
  return [
    `# HELP ${SYNC_METRIC} [ALPHA] SyncProxyRules latency in seconds`,
    `# TYPE ${SYNC_METRIC} histogram`,
    ...les.map((le, i) => `${SYNC_METRIC}_bucket${labels(`le="${le}"`)} ${counts[Math.min(i, counts.length - 1)]}`),
    `${SYNC_METRIC}_sum${labels()} ${sum}`,
    `${SYNC_METRIC}_count${labels()} ${counts[counts.length - 1]}`,
  ].join('\n');
}

const V4 = histogram('IPv4', [0, 0, 0, 4, 14, 33, 35, 35, 68], 6.9386);

describe('kube-proxy sync time from /metrics', () => {
  it('reads the ip_family-labelled histogram of kube-proxy ≥ 1.33', () => {
    expect(syncTime(V4)).toEqual({ syncs: 68, totalSeconds: 6.9386, averageMs: expect.closeTo(102.04, 2), p90Ms: 256 });
  });

  it('still reads the unlabelled one of older kube-proxies', () => {
    expect(syncTime(histogram(null, [0, 0, 0, 4, 14, 33, 35, 35, 68], 6.9386))?.syncs).toBe(68);
  });

  it('adds up both families on a dual-stack node', () => {
    const both = `${V4}\n${histogram('IPv6', [0, 0, 0, 2, 10, 30, 32, 32, 32], 1.2)}`;
    expect(syncTime(both)).toMatchObject({ syncs: 100, totalSeconds: expect.closeTo(8.1386, 6) });
  });

  it('sync-time.sh prints the same average from the labelled lines', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dplab-sync-'));
    try {
      // `docker exec <node> curl …` answered by a stand-in that prints the metrics text.
      writeFileSync(join(dir, 'metrics.txt'), `${V4}\n`);
      writeFileSync(join(dir, 'docker'), `#!/bin/sh\ncat "${join(dir, 'metrics.txt')}"\n`);
      chmodSync(join(dir, 'docker'), 0o755);
      const script = readFileSync(join(projectRoot, 'labs', 'scale-compare', 'manifests', 'sync-time.sh'), 'utf8');
      const out = execFileSync('sh', ['-c', script], {
        encoding: 'utf8',
        env: { ...process.env, PATH: `${dir}:${process.env.PATH}`, DPLAB_CLUSTER: 'dplab-iptables' },
      });
      expect(out).toMatch(/^all syncs: 102\.0 ms on average over 68 syncs$/m);
      // No full-sync series in this text: no line for them rather than a made-up one.
      expect(out).not.toMatch(/^full syncs:/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
