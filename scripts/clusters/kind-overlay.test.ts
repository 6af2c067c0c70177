// The test environment's one switch: without it the mode's own config goes to kind; with it a
// copy that differs exactly where the overlay says, and a bad file is a clear error.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { kindConfigFor, kindOverlay, nodeImage } from './kind-overlay.ts';
import { kindProvider } from './kind-provider.ts';
import { PROVISION_TIMEOUTS, type ProvisionTimeouts } from './timeouts.ts';
import { provisionActions } from './actions.ts';
import { kindConfigPath, MODES } from '../catalogue/modes.ts';
import { NODE_IMAGE } from '../base/versions.ts';

const saved = { overlay: process.env.DPLAB_KIND_OVERLAY, state: process.env.DPLAB_STATE_DIR };
afterEach(() => {
  process.env.DPLAB_KIND_OVERLAY = saved.overlay;
  process.env.DPLAB_STATE_DIR = saved.state;
  if (saved.overlay === undefined) delete process.env.DPLAB_KIND_OVERLAY;
  if (saved.state === undefined) delete process.env.DPLAB_STATE_DIR;
});

function withOverlay(content: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'dplab-overlay-'));
  const file = join(dir, 'overlay.json');
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  process.env.DPLAB_KIND_OVERLAY = file;
  process.env.DPLAB_STATE_DIR = dir;
  return dir;
}

describe('kind overlay', () => {
  it("is off on a learner's machine: the pinned image and the mode's own file", () => {
    delete process.env.DPLAB_KIND_OVERLAY;
    expect(kindOverlay()).toBeUndefined();
    expect(nodeImage()).toBe(NODE_IMAGE);
    expect(kindConfigFor('cilium')).toBe(kindConfigPath('cilium'));
  });

  it('starts the workers from the node image with the lab images, and only them, with or without the overlay', () => {
    delete process.env.DPLAB_KIND_OVERLAY;
    process.env.DPLAB_STATE_DIR = mkdtempSync(join(tmpdir(), 'dplab-overlay-'));
    const path = kindConfigFor('iptables', 'dplab.local/kind-node-labs:0123456789abcdef');
    expect(path).not.toBe(kindConfigPath('iptables'));
    const mine = parse(readFileSync(path, 'utf8'));
    const theirs = parse(readFileSync(kindConfigPath('iptables'), 'utf8'));
    expect(mine.nodes.map((n: { image: string }) => n.image)).toEqual([
      NODE_IMAGE,
      'dplab.local/kind-node-labs:0123456789abcdef',
      'dplab.local/kind-node-labs:0123456789abcdef',
    ]);
    expect({ ...mine, nodes: undefined }).toEqual({ ...theirs, nodes: undefined });
    expect(readFileSync(path, 'utf8')).toMatch(/Generated from .*iptables\.yaml with the workers from dplab\.local\/kind-node-labs/);

    withOverlay({ name: 'test', nodeImage: 'dplab.local/kindest-node:v1.35.0-abc' });
    const both = parse(readFileSync(kindConfigFor('nftables', 'dplab.local/kind-node-labs:0123456789abcdef'), 'utf8'));
    expect(both.nodes.map((n: { image: string }) => n.image)).toEqual([
      'dplab.local/kindest-node:v1.35.0-abc',
      'dplab.local/kind-node-labs:0123456789abcdef',
      'dplab.local/kind-node-labs:0123456789abcdef',
    ]);
  });

  it('writes a copy with the node image, the patches and the API address, and keeps the rest', () => {
    withOverlay({
      name: 'test',
      nodeImage: 'dplab.local/kindest-node:v1.35.0-abc',
      kubeadmConfigPatches: ['kind: KubeletConfiguration\nfailCgroupV1: false\n'],
      containerdConfigPatches: ['[plugins."io.containerd.grpc.v1.cri"]\n  restrict_oom_score_adj = true\n'],
      apiServerAddress: '192.168.127.2',
      apiServerPortBase: 16443,
    });
    // One port per mode: the base plus the mode's place in MODES.
    expect(parse(readFileSync(kindConfigFor('ipvs'), 'utf8')).networking.apiServerPort).toBe(16443 + MODES.indexOf('ipvs'));
    const path = kindConfigFor('iptables');
    expect(path).not.toBe(kindConfigPath('iptables'));
    const mine = parse(readFileSync(path, 'utf8'));
    const theirs = parse(readFileSync(kindConfigPath('iptables'), 'utf8'));
    expect(mine.nodes.map((n: { image: string }) => n.image)).toEqual([
      'dplab.local/kindest-node:v1.35.0-abc',
      'dplab.local/kindest-node:v1.35.0-abc',
      'dplab.local/kindest-node:v1.35.0-abc',
    ]);
    expect(mine.nodes.map((n: { role: string }) => n.role)).toEqual(theirs.nodes.map((n: { role: string }) => n.role));
    expect(mine.networking).toEqual({
      ...theirs.networking,
      apiServerAddress: '192.168.127.2',
      apiServerPort: 16443 + MODES.indexOf('iptables'),
    });
    expect(mine.kubeadmConfigPatches).toEqual(['kind: KubeletConfiguration\nfailCgroupV1: false\n']);
    expect(mine.containerdConfigPatches[0]).toMatch(/restrict_oom_score_adj = true/);
    expect(readFileSync(path, 'utf8')).toMatch(/Generated from .*iptables\.yaml with DPLAB_KIND_OVERLAY \(test\)/);
    expect(nodeImage()).toBe('dplab.local/kindest-node:v1.35.0-abc');
  });

  it('refuses a file that is not JSON, or not an overlay, naming the field and the fix', () => {
    withOverlay('{not json');
    expect(() => kindOverlay()).toThrow(/cannot be read as JSON/);
    withOverlay({ name: 'x', nodeImage: 3 });
    expect(() => kindOverlay()).toThrow(/is not a kind overlay: nodeImage/);
    withOverlay({ name: 'x', registry: 'elsewhere' });
    expect(() => kindOverlay()).toThrow(/is not a kind overlay/);
  });

  it('leaves slowness to DPLAB_TIMEOUT_FACTOR: every provisioning bound follows it, the poll pause does not, and the overlay has no knob of its own', async () => {
    expect(kindProvider.actions('iptables').map((a) => a.id)).toEqual(provisionActions('iptables').map((a) => a.id));
    vi.resetModules();
    vi.stubEnv('DPLAB_TIMEOUT_FACTOR', '4');
    try {
      const slow = (await import('./timeouts.ts')).PROVISION_TIMEOUTS;
      for (const key of Object.keys(PROVISION_TIMEOUTS) as (keyof ProvisionTimeouts)[])
        expect(slow[key], key).toBe(key === 'pollInterval' ? PROVISION_TIMEOUTS[key] : PROVISION_TIMEOUTS[key] * 4);
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
    withOverlay({ name: 'x', timeoutFactor: 4 });
    expect(() => kindOverlay()).toThrow(/is not a kind overlay/);
  });
});
