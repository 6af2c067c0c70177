/** Inside a workshop seat (DPLAB_SEAT) every cluster name carries the seat; outside nothing changes. */
import { afterEach, describe, expect, it } from 'vitest';
import { clusterName, kubeconfigPath, seatId } from '../catalogue/modes.ts';
import { ciliumInstallCommand } from './actions.ts';
import { kindProvider } from './kind-provider.ts';
import { modeSkip, mayDelete } from '../../test/live/ownership.ts';

afterEach(() => {
  delete process.env.DPLAB_SEAT;
});

describe('seat cluster names', () => {
  it('without a seat: dplab-<mode>', () => {
    expect(clusterName('iptables')).toBe('dplab-iptables');
    expect(kubeconfigPath('cilium')).toMatch(/\/kube\/dplab-cilium\.yaml$/);
  });
  it('in seat s07: dplab-s07-<mode>, and the kubeconfig, Cilium’s API host and the clean-up hint follow', () => {
    process.env.DPLAB_SEAT = 's07';
    expect(seatId()).toBe('s07');
    expect(clusterName('nftables')).toBe('dplab-s07-nftables');
    expect(kubeconfigPath('ipvs')).toMatch(/\/kube\/dplab-s07-ipvs\.yaml$/);
    expect(ciliumInstallCommand(clusterName('cilium'), '/tmp/kubeconfig', 'helm').args).toContain(
      'k8sServiceHost=dplab-s07-cilium-control-plane',
    );
    expect(kindProvider.manualCleanup('iptables')).toBe('kind delete cluster --name dplab-s07-iptables');
  });
  it('the live suite’s ownership rule reads the seat’s name too', () => {
    process.env.DPLAB_SEAT = 's07';
    expect(mayDelete('ipvs', new Set(['dplab-ipvs']))).toBe(true);
    expect(mayDelete('ipvs', new Set(['dplab-s07-ipvs']))).toBe(false);
    expect(modeSkip('ipvs', new Set(['dplab-s07-ipvs']), false)).toMatch(/^dplab-s07-ipvs existed/);
  });
  it('a seat id that could break a name or a path is refused with the fix', () => {
    for (const bad of ['S1', '../x', 'a b', '-a', 'a'.repeat(21)]) {
      process.env.DPLAB_SEAT = bad;
      expect(() => clusterName('iptables')).toThrow(/is not a seat id/);
    }
  });
});
