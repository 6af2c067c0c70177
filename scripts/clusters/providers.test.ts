import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { takeProviderFlag } from '../cli.ts';
import { providerFor } from './providers.ts';

const saved = { provider: process.env.DPLAB_PROVIDER, state: process.env.DPLAB_STATE_DIR };
afterEach(() => {
  for (const [k, v] of [
    ['DPLAB_PROVIDER', saved.provider],
    ['DPLAB_STATE_DIR', saved.state],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

describe('provider choice', () => {
  it('is kind by default, sim where a sim cluster of the mode exists, and what DPLAB_PROVIDER says when set', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dplab-prov-'));
    try {
      process.env.DPLAB_STATE_DIR = dir;
      delete process.env.DPLAB_PROVIDER;
      expect(providerFor('iptables').id).toBe('kind');
      mkdirSync(join(dir, 'sim', 'dplab-iptables'), { recursive: true });
      writeFileSync(join(dir, 'sim', 'dplab-iptables', 'cluster.json'), '{}');
      expect(providerFor('iptables').id).toBe('sim');
      // Written at the first step, completed at the last: a crashed start is not reusable.
      expect(providerFor('iptables').isComplete?.('iptables')).toBe(false);
      writeFileSync(join(dir, 'sim', 'dplab-iptables', 'cluster.json'), JSON.stringify({ complete: true }));
      expect(providerFor('iptables').isComplete?.('iptables')).toBe(true);
      expect(providerFor('nftables').id).toBe('kind');
      process.env.DPLAB_PROVIDER = 'kind';
      expect(providerFor('iptables').id).toBe('kind');
      process.env.DPLAB_PROVIDER = 'docker';
      expect(() => providerFor('iptables')).toThrow(/not a cluster provider/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes --provider out of the command line in both spellings', () => {
    expect(takeProviderFlag(['up', 'iptables', '--provider', 'sim'])).toEqual({ args: ['up', 'iptables'], provider: 'sim' });
    expect(takeProviderFlag(['--provider=kind', 'status'])).toEqual({ args: ['status'], provider: 'kind' });
    expect(takeProviderFlag(['status'])).toEqual({ args: ['status'], provider: undefined });
  });

  it('a sim handle refuses modes the sim cannot run and nodes that are not its own', async () => {
    process.env.DPLAB_PROVIDER = 'sim';
    process.env.DPLAB_STATE_DIR = mkdtempSync(join(tmpdir(), 'dplab-prov-'));
    await expect(providerFor('cilium').handle('cilium').nodes()).rejects.toThrow(/not cilium/);
    await expect(providerFor('iptables').handle('iptables').nodes()).rejects.toThrow(/is not running/);
  });
});
