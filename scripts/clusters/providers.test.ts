import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { takeProviderFlag } from '../cli.ts';
import { MODES, type Mode } from '../catalogue/modes.ts';
import { simBinDir } from '../sim/build.ts';
import * as layout from '../sim/layout.ts';
import type { ProviderId } from '../catalogue/provider-ids.ts';
import { nodeHealth } from './kube.ts';
import { ClusterManager } from './manager.ts';
import type { ClusterProvider } from './provider.ts';
import { ClusterProviders } from './providers.ts';

// Every function of the sim's layout, counted: a kind learner's requests must not reach it.
vi.mock('../sim/layout.ts', async (importOriginal) => {
  const real = await importOriginal<Record<string, unknown>>();
  return Object.fromEntries(Object.entries(real).map(([k, v]) => [k, typeof v === 'function' ? vi.fn(v as () => unknown) : v]));
});
const layoutCalls = () =>
  Object.values(layout)
    .filter((f) => vi.isMockFunction(f))
    .reduce((n, f) => n + (f as ReturnType<typeof vi.fn>).mock.calls.length, 0);

const saved = { ...process.env };
beforeEach(() => {
  process.env.DPLAB_STATE_DIR = mkdtempSync(join(tmpdir(), 'dplab-prov-'));
  delete process.env.DPLAB_PROVIDER;
  vi.clearAllMocks();
});
afterEach(() => {
  for (const k of ['DPLAB_PROVIDER', 'DPLAB_STATE_DIR', 'DPLAB_SIM_CACHE', 'PATH'] as const) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

function makeSimRecord(mode: Mode, record: object = {}): void {
  const dir = join(process.env.DPLAB_STATE_DIR!, 'sim', `dplab-${mode}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'cluster.json'), JSON.stringify(record));
}

describe('provider choice', () => {
  it('is kind by default, sim where a sim cluster of the mode exists, and what DPLAB_PROVIDER says when set', () => {
    expect(new ClusterProviders().provider('iptables').id).toBe('kind');
    makeSimRecord('iptables');
    const found = new ClusterProviders();
    expect(found.provider('iptables').id).toBe('sim');
    expect(found.requested).toBeUndefined();
    // Written at the first step, completed at the last: a crashed start is not reusable.
    expect(found.provider('iptables').isComplete?.('iptables')).toBe(false);
    makeSimRecord('iptables', { complete: true });
    expect(found.provider('iptables').isComplete?.('iptables')).toBe(true);
    expect(found.provider('nftables').id).toBe('kind');
    process.env.DPLAB_PROVIDER = 'kind';
    expect(new ClusterProviders().provider('iptables').id).toBe('kind');
    expect(new ClusterProviders().requested).toBe('kind');
    process.env.DPLAB_PROVIDER = 'docker';
    expect(() => new ClusterProviders()).toThrow(/not a cluster provider/);
  });

  it('is made once per mode: later sim state, and every later look, leave it as chosen', () => {
    const asked: Mode[] = [];
    const providers = new ClusterProviders({ simClusterExists: (m) => (asked.push(m), m === 'nftables') });
    expect(asked).toEqual([...MODES]);
    makeSimRecord('iptables');
    for (let i = 0; i < 5; i++) {
      expect(providers.provider('iptables').id).toBe('kind');
      expect(providers.handle('iptables').provider).toBe('kind');
      expect(providers.provider('nftables').id).toBe('sim');
      expect(providers.handle('nftables').provider).toBe('sim');
    }
    expect(asked).toEqual([...MODES]);
    // Asked for by name: the sim's folder is not looked at.
    const requested = new ClusterProviders({ requested: 'sim', simClusterExists: () => expect.fail('looked at the sim folder') });
    expect(MODES.map((m) => requested.provider(m).id)).toEqual(MODES.map(() => 'sim'));
  });

  it("after a delete, the mode's next cluster is the requested provider's, else kind's, without looking again", async () => {
    // Stand-ins that remove nothing: the real ones would run `kind delete` and `ip netns del`.
    const fake = (id: ProviderId) =>
      ({ id, delete: async () => undefined, handle: (mode: Mode) => ({ mode, provider: id }) }) as unknown as ClusterProvider;
    const byId = { kind: fake('kind'), sim: fake('sim') };
    let looks = 0;
    const providers = new ClusterProviders({ byId, simClusterExists: (m) => (looks++, m === 'iptables') });
    expect(providers.handle('iptables').provider).toBe('sim');
    // The manager's delete (`dplab down`, Delete on the page) tells the providers.
    await new ClusterManager({ providers }).delete('iptables');
    expect(providers.provider('iptables')).toBe(byId.kind);
    expect(providers.handle('iptables').provider).toBe('kind');
    expect(looks).toBe(MODES.length);
    const asked = new ClusterProviders({ byId, requested: 'sim', simClusterExists: () => false });
    asked.deleted('iptables');
    expect(asked.provider('iptables')).toBe(byId.sim);
    expect(asked.handle('iptables').provider).toBe('sim');
  });

  it("a kind learner's requests never reach the sim's layout once the choice is made", async () => {
    const providers = new ClusterProviders();
    expect(layoutCalls()).toBe(MODES.length); // the one look per mode, when the choice was made
    vi.clearAllMocks();
    // A kubectl that answers at once, so nothing real is asked.
    const bin = mkdtempSync(join(tmpdir(), 'dplab-bin-'));
    writeFileSync(join(bin, 'kubectl'), '#!/bin/sh\necho \'{"items":[]}\'\n');
    chmodSync(join(bin, 'kubectl'), 0o755);
    process.env.PATH = `${bin}:${process.env.PATH}`;
    for (const mode of MODES) {
      const h = providers.handle(mode);
      expect(providers.provider(mode).id).toBe('kind');
      expect(h.nodeShell(`dplab-${mode}-worker`)).toEqual(['docker', 'exec', '-it', `dplab-${mode}-worker`, 'bash']);
      expect(await nodeHealth(h, { timeoutMs: 10_000 })).toEqual({ total: 0, ready: 0, notReady: [] });
    }
    expect(layoutCalls()).toBe(0);
  });

  it('takes --provider out of the command line in both spellings', () => {
    expect(takeProviderFlag(['up', 'iptables', '--provider', 'sim'])).toEqual({ args: ['up', 'iptables'], provider: 'sim' });
    expect(takeProviderFlag(['--provider=kind', 'status'])).toEqual({ args: ['status'], provider: 'kind' });
    expect(takeProviderFlag(['status'])).toEqual({ args: ['status'], provider: undefined });
  });
});

describe('the sim handle', () => {
  it('refuses modes the sim cannot run and nodes that are not its own', async () => {
    const providers = new ClusterProviders({ requested: 'sim', simClusterExists: () => false });
    await expect(providers.handle('cilium').nodes()).rejects.toThrow(/not cilium/);
    await expect(providers.handle('iptables').nodes()).rejects.toThrow(/is not running/);
  });

  it("runs the sim's own kubectl, its shim first, and leaves the runner's PATH as it was", async () => {
    process.env.DPLAB_SIM_CACHE = mkdtempSync(join(tmpdir(), 'dplab-simcache-'));
    mkdirSync(simBinDir(), { recursive: true });
    const kubectl = join(simBinDir(), 'kubectl');
    writeFileSync(kubectl, '#!/bin/sh\necho "sim kubectl $*"\necho "$PATH"\n');
    chmodSync(kubectl, 0o755);
    const before = process.env.PATH;
    const h = new ClusterProviders({ requested: 'sim', simClusterExists: () => false }).handle('iptables');
    const r = await h.kubectl(['get', 'nodes'], { timeoutMs: 10_000 });
    const [said, path] = r.stdout.trim().split('\n');
    expect(said).toBe(`sim kubectl --kubeconfig ${h.kubeconfig} get nodes`);
    const shims = h.pathFirst!;
    expect(shims).toEqual([expect.stringMatching(/\/scripts\/sim\/shims$/), simBinDir()]);
    expect(path).toBe([...shims, before].join(':'));
    expect(process.env.PATH).toBe(before);
    await h.nodes().catch(() => undefined);
    expect(process.env.PATH).toBe(before);
  });
});
