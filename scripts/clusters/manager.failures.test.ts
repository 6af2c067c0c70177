import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { installDoubles, type Doubles, type DoublesOptions } from '../../test/fixtures/doubles.ts';
import { DAEMON_DOWN_STDERR, FAST_TIMEOUTS, fakeSystem, scenario } from '../../test/fixtures/cluster-scenarios.ts';
import type { DplabError } from '../base/errors.ts';
import { ClusterManager, type ClusterEvent } from './manager.ts';
import { kubeconfigPath, type Mode } from '../catalogue/modes.ts';
import { ActionStatus, newProgress } from './progress.ts';

function setup(mode: Mode, overrides: Parameters<typeof scenario>[1] = [], opts: DoublesOptions = {}) {
  const d = installDoubles(scenario(mode, overrides), opts);
  const events: ClusterEvent[] = [];
  const manager = new ClusterManager({ timeouts: FAST_TIMEOUTS, system: fakeSystem(), images: [] });
  manager.events.on((e) => events.push(e));
  return { d, manager, events };
}

async function failure(p: Promise<unknown>): Promise<DplabError> {
  try {
    await p;
  } catch (err) {
    return err as DplabError;
  }
  throw new Error('expected a failure');
}

const created = (doubles: Doubles) => doubles.commandLines().some((l) => l.startsWith('kind create'));
const deleted = (doubles: Doubles) => doubles.commandLines().some((l) => l.startsWith('kind delete cluster'));

/** No half state: nothing created (or it was deleted), no kubeconfig, status absent with the error. */
async function expectNoHalfState(manager: ClusterManager, doubles: Doubles, mode: Mode) {
  if (created(doubles)) expect(deleted(doubles)).toBe(true);
  expect(doubles.state().created ?? 'no').toBe('no');
  expect(existsSync(kubeconfigPath(mode))).toBe(false);
  const s = await manager.status(mode);
  expect(s.state).toBe('absent');
  expect(s.error?.message).toBeTruthy();
}

describe('status names the first blocker as up and doctor do', () => {
  it('Docker before kind when both are missing', async () => {
    const { manager } = setup('iptables', [], { without: ['docker', 'kind'] });
    const s = await manager.status('iptables');
    expect(s.state).toBe('absent');
    expect(s.error?.message).toBe('Docker is not installed: `docker` was not found on PATH.');
    expect(s.error?.fix).toMatch(/docs\.docker\.com/);
  });

  it('kind when Docker is fine', async () => {
    const { manager } = setup('iptables', [], { without: ['kind'] });
    const s = await manager.status('iptables');
    expect(s.error?.message).toMatch(/`kind` was not found on PATH/);
  });
});

describe('ensure: failure paths', () => {
  it('Docker CLI missing', async () => {
    const { d, manager } = setup('iptables', [], { without: ['docker'] });
    const err = await failure(manager.ensure('iptables'));
    expect(err.message).toBe('Cannot start the iptables cluster: Docker is not installed: `docker` was not found on PATH.');
    expect(err.fix).toMatch(/docs\.docker\.com/);
    expect(created(d)).toBe(false);
    await expectNoHalfState(manager, d, 'iptables');
  });

  it('Docker daemon down', async () => {
    const { d, manager, events } = setup('ipvs', [
      {
        tool: 'docker',
        match: '^info ',
        stdout: JSON.stringify({ ClientInfo: { Version: '28.2.2' } }),
        stderr: DAEMON_DOWN_STDERR,
        exit: 1,
      },
    ]);
    const err = await failure(manager.ensure('ipvs'));
    expect(err.message).toMatch(
      /^Cannot start the ipvs cluster: Docker is not running: the docker CLI is installed, but no Docker daemon \(engine\) answers\.$/,
    );
    expect(err.fix).toMatch(/systemctl start docker/);
    expect(events.filter((e) => e.type === 'action').map((e) => `${e.phase} ${e.id}`)).toEqual(['start preflight', 'fail preflight']);
    await expectNoHalfState(manager, d, 'ipvs');
  });

  it('kind missing', async () => {
    const { d, manager } = setup('iptables', [], { without: ['kind'] });
    const err = await failure(manager.ensure('iptables'));
    expect(err.message).toMatch(/kind is not installed/);
    expect(err.fix).toMatch(/kind\.sigs\.k8s\.io/);
    expect(created(d)).toBe(false);
  });

  it('kind too old for nftables (but only a warning for iptables)', async () => {
    const old = [{ tool: 'kind' as const, match: '^version$', stdout: 'kind v0.20.0 go1.20.4 linux/amd64\n' }];
    const { d, manager } = setup('nftables', old);
    const err = await failure(manager.ensure('nftables'));
    expect(err.message).toBe(
      'Cannot start the nftables cluster: kind v0.20.0 is too old for the nftables mode (needs kind v0.23.0 or newer).',
    );
    expect(err.fix).toMatch(/v0\.31\.0/);
    expect(created(d)).toBe(false);
  });

  it('create fails half-way: the half-made cluster is deleted', async () => {
    const { d, manager, events } = setup('iptables', [
      {
        tool: 'kind',
        match: '^create cluster ',
        stderr:
          ' ✓ Preparing nodes\n ✗ Starting control-plane\nERROR: failed to create cluster: failed to init node with kubeadm: exit status 1\n',
        exit: 1,
        set: { created: 'yes' },
      },
    ]);
    const err = await failure(manager.ensure('iptables'));
    expect(err.message).toMatch(
      /^Starting the iptables cluster failed at "Create the kind cluster \(3 nodes\)": `kind create cluster .*` failed \(exit code 1\): /,
    );
    expect(err.details).toMatch(/failed to init node with kubeadm/);
    expect(err.details).toMatch(/^\$ kind create cluster --name dplab-iptables/);
    const fail = events.find((e) => e.type === 'action' && e.phase === 'fail');
    expect(fail).toMatchObject({ id: 'create', error: { message: err.message } });
    await expectNoHalfState(manager, d, 'iptables');
  });

  it('--retain keeps the half-made cluster, reported as broken', async () => {
    const { d, manager, events } = setup('iptables', [
      { tool: 'kind', match: '^create cluster ', stderr: 'ERROR: boom\n', exit: 1, set: { created: 'yes' } },
    ]);
    await failure(manager.ensure('iptables', { retain: true }));
    expect(deleted(d)).toBe(false);
    expect(d.commandLines().find((l) => l.startsWith('kind create'))).toMatch(/ --retain$/);
    const last = events.filter((e) => e.type === 'status').at(-1);
    expect(last).toMatchObject({ status: { state: 'broken' } });
  });

  it('Cilium never reports KubeProxyReplacement True: bounded wait, then clean-up', async () => {
    const { d, manager } = setup('cilium', [{ tool: 'kubectl', match: 'cilium-dbg status$', stdout: 'KubeProxyReplacement:    False\n' }]);
    const started = Date.now();
    const err = await failure(manager.ensure('cilium'));
    expect(err.message).toMatch(
      /failed at "Wait for the dataplane \(kube-proxy or Cilium\)": Timed out after \d+ s waiting for Cilium to report `KubeProxyReplacement: True`/,
    );
    expect(err.details).toMatch(/Last seen:\nKubeProxyReplacement:\s+False/);
    expect(Date.now() - started).toBeLessThan(20_000);
    await expectNoHalfState(manager, d, 'cilium');
  });

  it('a worker whose kubelet never registers: not "ready" with fewer nodes than the kind config makes', async () => {
    // Measured in a seat's Docker-in-Docker on a cgroup v1 host: kind created three nodes, only the control plane registered.
    const onlyControlPlane = JSON.stringify({
      items: [{ metadata: { name: 'dplab-iptables-control-plane' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }],
    });
    const { d, manager } = setup('iptables', [{ tool: 'kubectl', match: ' get nodes -o json$', stdout: onlyControlPlane }]);
    const err = await failure(manager.ensure('iptables'));
    expect(err.message).toMatch(
      /failed at "Wait for the nodes to be Ready": Timed out after \d+ s waiting for all 3 nodes of dplab-iptables to register with the API server/,
    );
    expect(err.details).toMatch(/1 of 3 nodes registered/);
    expect(err.fix).toContain('docker exec dplab-iptables-worker journalctl -u kubelet');
    await expectNoHalfState(manager, d, 'iptables');
  });

  it('Cilium DaemonSet never rolls out', async () => {
    const { d, manager } = setup('cilium', [
      { tool: 'kubectl', match: 'rollout status daemonset/cilium', stderr: 'error: timed out waiting for the condition\n', exit: 1 },
    ]);
    const err = await failure(manager.ensure('cilium'));
    expect(err.message).toMatch(/timed out waiting for the condition/);
    expect(err.fix).toMatch(/k8s-app=cilium/);
    await expectNoHalfState(manager, d, 'cilium');
  });

  it('kube-proxy that keeps exiting (IPVS on a kernel without ip_vs) stops the start at once, naming the node, its log line and the fix', async () => {
    const crashing = JSON.stringify({
      items: [
        {
          metadata: { name: 'kube-proxy-gzplc' },
          spec: { nodeName: 'dplab-ipvs-worker' },
          status: {
            containerStatuses: [{ name: 'kube-proxy', ready: false, restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff' } } }],
          },
        },
      ],
    });
    const { d, manager } = setup('ipvs', [
      // The rollout waits its whole bound; the crash watch must end the start long before.
      { tool: 'kubectl', match: 'rollout status daemonset/kube-proxy', delayMs: 30_000 },
      { tool: 'kubectl', match: ' -n kube-system get pods -l k8s-app=kube-proxy -o json$', stdout: crashing },
      {
        tool: 'kubectl',
        match: ' -n kube-system logs kube-proxy-gzplc -c kube-proxy --previous --tail=20$',
        stdout: 'E1207 22:13:57.113897       1 run.go:72] "command failed" err="can\'t use the IPVS proxier: Ipvs not supported"\n',
      },
    ]);
    const started = Date.now();
    const err = await failure(manager.ensure('ipvs', { timeouts: { rollout: 30_000 } }));
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(err.message).toBe(
      'Starting the ipvs cluster failed at "Wait for the dataplane (kube-proxy or Cilium)": kube-proxy on dplab-ipvs-worker keeps exiting (restarted 3 times): E1207 22:13:57.113897       1 run.go:72] "command failed" err="can\'t use the IPVS proxier: Ipvs not supported"',
    );
    expect(err.fix).toBe(
      "This host's kernel has no IPVS (CONFIG_IP_VS), so the IPVS cluster cannot run here: use another mode, or a host or Docker VM whose kernel has ip_vs.",
    );
    await expectNoHalfState(manager, d, 'ipvs');
  });

  it('a command that hangs past its timeout is stopped and cleaned up', async () => {
    const { d, manager } = setup('iptables', [{ tool: 'kind', match: '^create cluster ', delayMs: 20_000, set: { created: 'yes' } }]);
    const started = Date.now();
    const err = await failure(manager.ensure('iptables', { timeouts: { create: 300 } }));
    expect(err.message).toMatch(/`kind create cluster .*` did not finish within 300 ms and was stopped\./);
    expect(Date.now() - started).toBeLessThan(15_000);
    await expectNoHalfState(manager, d, 'iptables');
  });

  it('abort (Ctrl-C) stops the running command, cleans up, and the next run is not blocked', async () => {
    const { d, manager } = setup('iptables', [
      { tool: 'kind', match: '^create cluster ', when: { slow: 'yes' }, delayMs: 20_000, set: { created: 'yes' } },
    ]);
    d.setState({ slow: 'yes' });
    const controller = new AbortController();
    const p = manager.ensure('iptables', { signal: controller.signal });
    // Abort once the create command is running.
    while (!created(d)) await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    const err = await failure(p);
    expect(err.message).toBe('Starting the iptables cluster was cancelled.');
    expect(deleted(d)).toBe(true);
    expect(manager.isProvisioning('iptables')).toBe(false);
    d.setState({ slow: 'no' });
    expect((await manager.ensure('iptables')).state).toBe('ready');
  });

  it("delete cancels a cluster started ahead while it starts (the page's Stop), cleans up, and the mark goes", async () => {
    const { d, manager, events } = setup('nftables', [
      { tool: 'kind', match: '^create cluster ', when: { slow: 'yes' }, delayMs: 20_000, set: { created: 'yes' } },
    ]);
    d.setState({ slow: 'yes' });
    // The run's waiter sees the cancel while delete still runs: take its answer from the start.
    const p = manager.ensure('nftables', { ahead: true }).then(
      () => new Error('not cancelled'),
      (e: Error) => e,
    );
    while (!created(d)) await new Promise((r) => setTimeout(r, 50));
    expect((await manager.status('nftables')).startedAhead).toBe(true);
    expect((await manager.delete('nftables')).state).toBe('absent');
    expect((await p).message).toMatch(/cancelled/);
    expect(deleted(d)).toBe(true);
    expect(manager.isProvisioning('nftables')).toBe(false);
    const last = events.filter((e) => e.type === 'status').at(-1) as Extract<ClusterEvent, { type: 'status' }>;
    expect(last.status).toMatchObject({ state: 'absent' });
    expect(last.status.startedAhead).toBeUndefined();
  });

  it('a node the stopped create was still making, which appears after the delete, is deleted too', async () => {
    // The engine finishes the killed kind's `docker run` after the first delete has run.
    const { d, manager } = setup('iptables', [
      { tool: 'kind', match: '^create cluster ', when: { slow: 'yes' }, delayMs: 20_000, set: { created: 'yes' } },
      { tool: 'kind', match: '^delete cluster ', when: { late: 'pending' }, set: { created: 'yes', late: 'appeared' } },
    ]);
    d.setState({ slow: 'yes', late: 'pending' });
    const controller = new AbortController();
    const p = manager.ensure('iptables', { signal: controller.signal });
    while (!created(d)) await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    await expect(p).rejects.toThrow(/cancelled/);
    expect(
      d.commandLines().filter((l) => l.startsWith('kind delete cluster')),
      d.commandLines().join('\n'),
    ).toHaveLength(2);
    expect(d.state().created).toBe('no');
    expect((await manager.status('iptables')).state).toBe('absent');
  }, 20_000);

  it('a plain `down` deletes once and does not wait for late nodes', async () => {
    const { d, manager } = setup('iptables');
    d.setState({ created: 'yes' });
    await manager.delete('iptables');
    expect(d.commandLines().filter((l) => l.startsWith('kind get clusters'))).toHaveLength(0);
    expect(d.commandLines().filter((l) => l.startsWith('kind delete cluster'))).toHaveLength(1);
  });

  it('one waiter giving up does not cancel the run another waiter still needs', async () => {
    const { manager } = setup('iptables');
    const controller = new AbortController();
    const a = manager.ensure('iptables', { signal: controller.signal });
    const b = manager.ensure('iptables');
    controller.abort();
    await expect(a).rejects.toThrow(/cancelled/);
    expect((await b).state).toBe('ready');
  });
});

describe('ActionStatus', () => {
  it('can be ended twice; only the first end counts', () => {
    const events: ClusterEvent[] = [];
    const progress = newProgress('r1', [{ id: 'a', title: 'A' }]);
    const st = new ActionStatus(progress.actions[0], 'iptables', 'r1', (e) => events.push(e));
    st.start();
    st.end(true);
    st.end(false);
    expect(progress.actions[0].state).toBe('done');
    expect(events.map((e) => (e.type === 'action' ? e.phase : e.type))).toEqual(['start', 'end']);
  });
});
