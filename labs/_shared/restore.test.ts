// Reset puts back what labs change outside their namespace, and only that: run against an
// in-memory cluster that behaves like the real one for these commands (dpkg/apt-get in the
// nodes, the kube-proxy ConfigMap as kind writes it, node labels).
import { describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../scripts/clusters/handle.ts';
import type { CommandResult } from '../../scripts/base/exec.ts';
import { restoreCluster } from '../../scripts/labs/reset.ts';
import { requireLab } from '../../scripts/labs/registry.ts';

const NODES = ['dplab-ipvs-control-plane', 'dplab-ipvs-worker', 'dplab-ipvs-worker2'];
/** The IPVS part of kind's kube-proxy config.conf (KubeProxyConfiguration, abridged). */
const conf = (scheduler: string) =>
  `apiVersion: kubeproxy.config.k8s.io/v1alpha1\nipvs:\n  excludeCIDRs: null\n  minSyncPeriod: 0s\n  scheduler: ${scheduler}\n  strictARP: false\nkind: KubeProxyConfiguration\nmode: ipvs\n`;

function fakeCluster(state: { installed: Set<string>; scheduler: string | undefined; labels: Set<string> }) {
  const calls: string[] = [];
  const ok = (stdout = ''): CommandResult =>
    ({ command: 'x', args: [], exitCode: 0, stdout, stderr: '', durationMs: 1 }) as unknown as CommandResult;
  const handle = {
    mode: 'ipvs',
    name: 'dplab-ipvs',
    kubeconfig: '/dev/null',
    async nodes() {
      return NODES;
    },
    async nodeExec(node: string, args: readonly string[]) {
      calls.push(`exec ${node} ${args.join(' ')}`);
      const script = args[2] ?? '';
      if (script.includes('dpkg -s ipvsadm') && state.installed.has(node)) {
        state.installed.delete(node);
        return ok('removed\n');
      }
      return ok();
    },
    async kubectl(args: readonly string[], opts?: { input?: string }) {
      calls.push(`kubectl ${args.join(' ')}`);
      if (args[0] === 'apply') state.scheduler = /scheduler: (\S+)/.exec(JSON.parse(opts?.input ?? '{}').data['config.conf'])![1];
      if (args[0] === 'label') for (const n of args.slice(2, -1)) state.labels.delete(n);
      return ok();
    },
    async kubectlJson(args: readonly string[]) {
      calls.push(`kubectl ${args.join(' ')} -o json`);
      if (args.includes('configmaps'))
        return {
          items:
            state.scheduler === undefined
              ? []
              : [{ metadata: { name: 'kube-proxy', namespace: 'kube-system' }, data: { 'config.conf': conf(state.scheduler) } }],
        };
      if (args[0] === 'get' && args[1] === 'nodes') return { items: [...state.labels].map((name) => ({ metadata: { name } })) };
      return {};
    },
  } as unknown as ClusterHandle;
  return { handle, calls };
}

describe('reset restores cluster-wide changes', () => {
  it('ipvs-inspect: ipvsadm removed where it was installed, scheduler lc back to the default, kube-proxy restarted', async () => {
    const state = { installed: new Set(['dplab-ipvs-worker']), scheduler: 'lc', labels: new Set<string>() };
    const { handle, calls } = fakeCluster(state);
    const notes = await restoreCluster(requireLab('ipvs-inspect'), handle);
    expect(notes).toEqual([
      'removed ipvsadm from dplab-ipvs-worker',
      "kube-proxy's IPVS scheduler set back from lc to the default (rr), kube-proxy restarted",
    ]);
    expect(state).toMatchObject({ scheduler: '""' });
    expect(state.installed.size).toBe(0);
    expect(calls).toContain('kubectl -n kube-system rollout restart daemonset kube-proxy');
  });

  it('ipvs-inspect on an untouched cluster: nothing is changed and kube-proxy is not restarted', async () => {
    const { handle, calls } = fakeCluster({ installed: new Set(), scheduler: '""', labels: new Set() });
    expect(await restoreCluster(requireLab('ipvs-inspect'), handle)).toEqual([]);
    expect(calls.filter((c) => /apply|rollout|label /.test(c))).toEqual([]);
  });

  it('ipvs-inspect where kube-proxy has no ConfigMap (a cluster kubeadm did not make): nothing to restore', async () => {
    const { handle, calls } = fakeCluster({ installed: new Set(), scheduler: undefined, labels: new Set() });
    expect(await restoreCluster(requireLab('ipvs-inspect'), handle)).toEqual([]);
    expect(calls.filter((c) => /apply|rollout/.test(c))).toEqual([]);
  });

  it('etp-local: the dplab-web label comes off the node it was put on', async () => {
    const state = { installed: new Set<string>(), scheduler: '""', labels: new Set(['dplab-ipvs-worker']) };
    const { handle, calls } = fakeCluster(state);
    expect(await restoreCluster(requireLab('etp-local'), handle)).toEqual(['removed label dplab-web from dplab-ipvs-worker']);
    expect(calls).toContain('kubectl label nodes dplab-ipvs-worker dplab-web-');
    expect(state.labels.size).toBe(0);
  });
});
