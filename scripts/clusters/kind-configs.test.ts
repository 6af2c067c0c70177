import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { MODES, MODE_INFO, kindConfigPath, kubeProxyMode } from '../catalogue/modes.ts';
import { NODE_IMAGE } from '../base/versions.ts';

/**
 * The keys kind v1alpha4 accepts (pkg/apis/config/v1alpha4/types.go, yaml tags). kind's own
 * loader is strict about unknown fields, so a typo here would fail `kind create cluster`.
 */
const CLUSTER_KEYS = new Set([
  'kind',
  'apiVersion',
  'name',
  'nodes',
  'networking',
  'featureGates',
  'runtimeConfig',
  'kubeadmConfigPatches',
  'kubeadmConfigPatchesJSON6902',
  'containerdConfigPatches',
  'containerdConfigPatchesJSON6902',
]);
const NODE_KEYS = new Set([
  'role',
  'image',
  'labels',
  'extraMounts',
  'extraPortMappings',
  'gpus',
  'kubeadmConfigPatches',
  'kubeadmConfigPatchesJSON6902',
]);
const NETWORKING_KEYS = new Set([
  'ipFamily',
  'apiServerPort',
  'apiServerAddress',
  'podSubnet',
  'serviceSubnet',
  'disableDefaultCNI',
  'kubeProxyMode',
  'dnsSearch',
]);
const PROXY_MODES = new Set(['iptables', 'ipvs', 'nftables', 'none']);

const load = (mode: (typeof MODES)[number]) => parse(readFileSync(kindConfigPath(mode), 'utf8')) as Record<string, any>;

describe('kind configs', () => {
  for (const mode of MODES) {
    describe(mode, () => {
      const cfg = load(mode);

      it('is a v1alpha4 Cluster with only keys kind accepts', () => {
        expect(cfg.kind).toBe('Cluster');
        expect(cfg.apiVersion).toBe('kind.x-k8s.io/v1alpha4');
        for (const k of Object.keys(cfg)) expect(CLUSTER_KEYS, `cluster key ${k}`).toContain(k);
        for (const k of Object.keys(cfg.networking)) expect(NETWORKING_KEYS, `networking key ${k}`).toContain(k);
        for (const node of cfg.nodes) for (const k of Object.keys(node)) expect(NODE_KEYS, `node key ${k}`).toContain(k);
      });

      it('has one control plane and two workers on the pinned image', () => {
        expect(cfg.nodes.map((n: { role: string }) => n.role)).toEqual(['control-plane', 'worker', 'worker']);
        for (const node of cfg.nodes) expect(node.image).toBe(NODE_IMAGE);
      });

      it('sets the proxy mode and the subnets of the modes registry', () => {
        const info = MODE_INFO[mode];
        expect(PROXY_MODES).toContain(cfg.networking.kubeProxyMode);
        expect(cfg.networking.kubeProxyMode).toBe(kubeProxyMode(mode) ?? 'none');
        expect(cfg.networking.podSubnet).toBe(info.podSubnet);
        expect(cfg.networking.serviceSubnet).toBe(info.serviceSubnet);
        if (info.dataplane.kind === 'agent') expect(cfg.networking.disableDefaultCNI).toBe(true);
        else expect(cfg.networking.disableDefaultCNI).toBeUndefined();
      });
    });
  }

  it('keeps every subnet distinct across modes', () => {
    const subnets = MODES.flatMap((m) => [load(m).networking.podSubnet, load(m).networking.serviceSubnet]);
    expect(new Set(subnets).size).toBe(subnets.length);
    const overlaps = (a: string, b: string) => {
      const toRange = (cidr: string) => {
        const [ip, bits] = cidr.split('/');
        const n = ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
        const size = 2 ** (32 - Number(bits));
        return [n, n + size - 1];
      };
      const [a0, a1] = toRange(a);
      const [b0, b1] = toRange(b);
      return a0 <= b1 && b0 <= a1;
    };
    for (let i = 0; i < subnets.length; i++)
      for (let j = i + 1; j < subnets.length; j++) expect(overlaps(subnets[i], subnets[j]), `${subnets[i]} vs ${subnets[j]}`).toBe(false);
  });
});
