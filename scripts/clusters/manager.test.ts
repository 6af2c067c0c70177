import { existsSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installDoubles, type Doubles, type DoublesOptions } from '../../test/fixtures/doubles.ts';
import { ABSENT_IMAGE, FAST_TIMEOUTS, PRESENT_IMAGE, fakeSystem, nodesJson, scenario } from '../../test/fixtures/cluster-scenarios.ts';
import { ClusterManager, type ClusterEvent } from './manager.ts';
import { COREDNS_PROBE_PATCH } from './actions.ts';
import { kubeconfigPath, MODES, type Mode } from '../catalogue/modes.ts';
import { CILIUM_VERSION } from '../base/versions.ts';
import type { DplabError } from '../base/errors.ts';

function setup(mode: Mode, overrides: Parameters<typeof scenario>[1] = [], opts: DoublesOptions = {}) {
  const d = installDoubles(scenario(mode, overrides), opts);
  const events: ClusterEvent[] = [];
  const manager = new ClusterManager({ timeouts: FAST_TIMEOUTS, system: fakeSystem(), images: [PRESENT_IMAGE, ABSENT_IMAGE] });
  manager.events.on((e) => events.push(e));
  return { d, manager, events };
}

/** Lines without the preflight probes, which run in parallel and so in no fixed order. */
const allProvisioningLines = (doubles: Doubles) =>
  doubles.commandLines().filter((l) => !/^(docker info|kind version|kubectl version|cilium version|helm version)/.test(l));
/** The patch of CoreDNS's readiness probe, run in the control plane beside `kind create`. */
const isDnsPatchLine = (l: string) => /^docker exec \S+-control-plane sh -c i=0\n/.test(l);
/** The image load's lines: it runs beside `kind create` and the waits after it, so its lines interleave with theirs. */
const isImageLine = (l: string) => /^(docker image inspect|docker exec|kind load docker-image) /.test(l) && !isDnsPatchLine(l);
/** The provisioning lines in their fixed order, without the image load's, the CoreDNS patch's and the crash watch's. */
/** The crash watch beside a DaemonSet's rollout (crash-watch.ts): it reads the pods while the rollout waits. */
const isCrashWatchLine = (l: string) => / -n kube-system get pods -l \S+ -o json$/.test(l);
const provisioningLines = (doubles: Doubles) =>
  allProvisioningLines(doubles).filter((l) => !isImageLine(l) && !isDnsPatchLine(l) && !isCrashWatchLine(l));

describe('ensure: exact command lines per mode', () => {
  for (const mode of MODES.filter((m) => m !== 'cilium')) {
    it(mode, async () => {
      const { d, manager } = setup(mode);
      const status = await manager.ensure(mode);
      expect(status).toMatchObject({ mode, state: 'ready', nodes: 3, readyNodes: 3, proxyMode: mode });
      const kc = kubeconfigPath(mode);
      const name = `dplab-${mode}`;
      expect(provisioningLines(d)).toEqual([
        'kind get clusters',
        `kind create cluster --name ${name} --config ${process.cwd()}/kind-configs/${mode}.yaml --kubeconfig ${kc} --wait 0s`,
        // Every node of the kind config registered before the Ready wait (which sees only those that did).
        `kubectl --kubeconfig ${kc} get nodes -o json`,
        `kubectl --kubeconfig ${kc} wait --for=condition=Ready nodes --all --timeout=4s`,
        `kubectl --kubeconfig ${kc} -n kube-system rollout status daemonset/kube-proxy --timeout=4s`,
        `kubectl --kubeconfig ${kc} -n kube-system rollout status deployment/coredns --timeout=4s`,
        `kubectl --kubeconfig ${kc} get nodes -o json`,
      ]);
      const all = allProvisioningLines(d);
      // kubeadm under way (the control plane's CA): asked by both waits beside create, the image
      // load's and the CoreDNS patch's, so its lines are the image load's only in part.
      const kubeadmProbe = `docker exec ${name}-control-plane test -f /etc/kubernetes/pki/ca.crt`;
      const probes = [
        `docker exec ${name}-worker ctr --namespace k8s.io version`,
        `docker exec ${name}-worker2 ctr --namespace k8s.io version`,
      ];
      const images = all.filter((l) => isImageLine(l) && l !== kubeadmProbe);
      expect(images.slice(0, 2)).toEqual([
        `docker image inspect --format {{.Id}} ${PRESENT_IMAGE}`,
        `docker image inspect --format {{.Id}} ${ABSENT_IMAGE}`,
      ]);
      // Then it waits for kubeadm to be under way and each worker's containerd to answer (asking
      // again while the nodes do not exist yet), and loads into the workers only: lab pods never
      // run on the control plane.
      expect(images.slice(-3)).toEqual([
        ...probes,
        `kind load docker-image --name ${name} --nodes ${name}-worker,${name}-worker2 ${PRESENT_IMAGE}`,
      ]);
      expect(images.slice(2, -3).every((l) => probes.includes(l))).toBe(true);
      expect(all.lastIndexOf(kubeadmProbe)).toBeGreaterThan(-1);
      expect(all.indexOf(kubeadmProbe)).toBeLessThan(all.indexOf(probes[0]));
      // The load goes in once the nodes exist, and before the cluster is reported ready (its last node read).
      expect(all.indexOf(images.at(-1)!)).toBeGreaterThan(all.findIndex((l) => l.startsWith('kind create')));
      expect(all.findLastIndex(isImageLine)).toBeLessThan(all.length - 1);
      // CoreDNS's probe is patched once, in the control plane, within the create step (before the waits).
      const patches = all.filter(isDnsPatchLine);
      expect(patches).toEqual([expect.stringMatching(new RegExp(`^docker exec ${name}-control-plane sh -c i=0\n`))]);
      expect(patches[0]).toContain('patch deployment coredns -p "$1"');
      expect(patches[0].endsWith(` sh ${COREDNS_PROBE_PATCH}`)).toBe(true);
      expect(all.indexOf(patches[0])).toBeLessThan(all.findIndex((l) => l.includes(' wait --for=condition=Ready nodes ')));
    });
  }

  const ciliumTail = (kc: string) => [
    `kubectl --kubeconfig ${kc} get nodes -o json`,
    `kubectl --kubeconfig ${kc} wait --for=condition=Ready nodes --all --timeout=4s`,
    `kubectl --kubeconfig ${kc} -n kube-system rollout status daemonset/cilium --timeout=4s`,
    `kubectl --kubeconfig ${kc} -n kube-system exec ds/cilium -c cilium-agent -- cilium-dbg status`,
    `kubectl --kubeconfig ${kc} -n kube-system rollout status deployment/coredns --timeout=4s`,
  ];
  const values =
    '--set kubeProxyReplacement=true --set k8sServiceHost=dplab-cilium-control-plane --set k8sServicePort=6443 --set ipam.mode=kubernetes';

  it('cilium, through the cilium CLI with KUBECONFIG set', async () => {
    const { d, manager } = setup('cilium');
    await manager.ensure('cilium');
    const kc = kubeconfigPath('cilium');
    const lines = provisioningLines(d);
    expect(lines[1]).toMatch(
      /^kind create cluster --name dplab-cilium --config .*\/kind-configs\/cilium\.yaml --kubeconfig \S+ --wait 0s$/,
    );
    expect(lines[2]).toBe(`cilium install --version ${CILIUM_VERSION} ${values}`);
    expect(lines.slice(3, 8)).toEqual(ciliumTail(kc));
    const install = d.calls().find((c) => c.tool === 'cilium' && c.argv[0] === 'install');
    expect(install?.kubeconfig).toBe(kc);
  });

  it('cilium, through helm when the cilium CLI is missing', async () => {
    const { d, manager } = setup('cilium', [], { without: ['cilium'] });
    await manager.ensure('cilium');
    const kc = kubeconfigPath('cilium');
    const lines = provisioningLines(d);
    expect(lines[2]).toBe(
      `helm upgrade --install cilium cilium --repo https://helm.cilium.io --version ${CILIUM_VERSION} --namespace kube-system --kubeconfig ${kc} ${values}`,
    );
    expect(lines.slice(3, 8)).toEqual(ciliumTail(kc));
  });
});

describe('ensure: pipeline, events, reuse, coalescing', () => {
  it('emits start/end per action in order, the image load beside the waits, notes skipped images, then a ready status', async () => {
    const { manager, events } = setup('iptables');
    await manager.ensure('iptables');
    const actions = events.filter((e) => e.type === 'action').map((e) => `${e.phase} ${e.id}`);
    // The image load starts beside `kind create` (it waits there for the nodes); the waits follow create.
    expect(actions.slice(0, 4)).toEqual(['start preflight', 'end preflight', 'start images', 'start create']);
    expect(actions.filter((a) => !a.endsWith(' images'))).toEqual(
      ['preflight', 'create', 'nodes-ready', 'dataplane', 'coredns'].flatMap((id) => [`start ${id}`, `end ${id}`]),
    );
    expect(actions).toContain('end images');
    expect(events.filter((e) => e.type === 'info').map((e) => e.message)).toEqual([expect.stringContaining(`Skipped ${ABSENT_IMAGE}`)]);
    const statuses = events.filter((e) => e.type === 'status').map((e) => e.status.state);
    expect(statuses).toEqual(['provisioning', 'ready']);
    const last = await manager.status('iptables');
    expect(last.progress?.actions.every((a) => a.state === 'done')).toBe(true);
  });

  it('kind load failing (multi-arch image under the containerd image store) is a note; the cluster starts and is kept', async () => {
    // kind's own error for that case, as reported in kubernetes-sigs/kind#4224 (see also #3795), node name ours.
    const stderr =
      'ERROR: failed to load image: command "docker exec --privileged -i dplab-iptables-control-plane ctr --namespace=k8s.io images import --all-platforms --digests --snapshotter=overlayfs -" failed with error: exit status 1\n\nCommand Output: ctr: content digest sha256:b1addbe72465a718643cff9e60a58e6df1841e29d6d7d60c9a85d8d72f08d1a7: not found\n';
    const { d, manager, events } = setup('iptables', [{ tool: 'kind', match: '^load docker-image ', stderr, exit: 1 }]);
    const status = await manager.ensure('iptables');
    expect(status.state).toBe('ready');
    expect(d.commandLines().some((l) => l.startsWith('kind delete'))).toBe(false);
    const notes = events.filter((e) => e.type === 'info').map((e) => e.message);
    expect(notes).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^Could not preload ${PRESENT_IMAGE.replace(/[.]/g, '\\.')} \\(Command Output: ctr: content digest sha256:b1ad.*not found\\); the nodes will pull it`,
        ),
      ),
    );
  });

  it("CoreDNS's probe that cannot be patched is a note: the cluster starts at kubeadm's pace and is kept", async () => {
    const { d, manager, events } = setup('iptables', [
      {
        tool: 'docker',
        match: '^exec dplab-iptables-control-plane sh -c i=0\\n',
        stderr: 'Error from server (NotFound): deployments.apps "coredns" not found\n',
        exit: 1,
      },
    ]);
    expect((await manager.ensure('iptables')).state).toBe('ready');
    expect(d.commandLines().some((l) => l.startsWith('kind delete'))).toBe(false);
    expect(events.filter((e) => e.type === 'info').map((e) => e.message)).toContainEqual(
      'CoreDNS keeps kubeadm\'s 10 s readiness probe (Error from server (NotFound): deployments.apps "coredns" not found); cluster DNS may take a few seconds longer.',
    );
  });

  it('a kind create that fails stops the CoreDNS patch waiting beside it: nothing asks the nodes afterwards', async () => {
    const { d, manager } = setup('iptables', [
      {
        tool: 'kind',
        match: '^create cluster --name dplab-iptables ',
        stderr: 'ERROR: failed to create cluster: boom\n',
        exit: 1,
        delayMs: 300,
      },
    ]);
    const err = await manager.ensure('iptables').then(
      () => undefined,
      (e: DplabError) => e,
    );
    expect(err?.message).toMatch(/failed at "Create the kind cluster/);
    // Before the failure the nodes did not exist, and the waits beside create asked each second.
    const asked = () => d.commandLines().filter((l) => l.startsWith('docker exec dplab-iptables-control-plane ')).length;
    const before = asked();
    expect(before).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(asked()).toBe(before);
    expect(d.commandLines().some(isDnsPatchLine)).toBe(false);
  });

  it('the image load starts beside kind create: once kubeadm is under way the images go in before create has ended', async () => {
    const { d, manager, events } = setup('iptables', [
      // The nodes exist (and kubeadm runs) from the start of a create that takes a while.
      {
        tool: 'kind',
        match: '^create cluster --name dplab-iptables ',
        delayMs: 800,
        set: { created: 'yes' },
        writesAfter: '--kubeconfig',
        writes: 'apiVersion: v1\n',
      },
    ]);
    expect((await manager.ensure('iptables')).state).toBe('ready');
    const actions = events.filter((e) => e.type === 'action').map((e) => `${e.phase} ${e.id}`);
    expect(actions.indexOf('end images')).toBeGreaterThan(-1);
    expect(actions.indexOf('end images')).toBeLessThan(actions.indexOf('end create'));
    expect(d.commandLines()).toContain(
      'kind load docker-image --name dplab-iptables --nodes dplab-iptables-worker,dplab-iptables-worker2 ' + PRESENT_IMAGE,
    );
  });

  it('nodes that never take images: the load gives up within its bound, says what it saw, and the cluster goes', async () => {
    const { d, manager } = setup('iptables', [
      {
        tool: 'docker',
        match: '^exec dplab-iptables-worker2 ctr ',
        stderr: 'ctr: failed to dial "/run/containerd/containerd.sock": connection refused\n',
        exit: 1,
      },
      { tool: 'kubectl', match: ' wait --for=condition=Ready nodes --all ', stdout: 'condition met\n', delayMs: 10_000 },
    ]);
    const err = await manager.ensure('iptables', { timeouts: { create: 600 } }).then(
      () => undefined,
      (e: DplabError) => e,
    );
    expect(err?.message).toMatch(/failed at "Load lab images into the nodes"/);
    expect(err?.details).toContain('dplab-iptables-worker2: containerd does not answer yet (ctr: failed to dial');
    expect(d.commandLines().some((l) => l.startsWith('kind load'))).toBe(false);
    expect(d.commandLines().some((l) => l.startsWith('kind delete cluster --name dplab-iptables'))).toBe(true);
  });

  it('the image load runs beside the waits: it is under way before the Ready wait has answered', async () => {
    const { d, manager } = setup('iptables', [
      { tool: 'kubectl', match: ' wait --for=condition=Ready nodes --all ', stdout: 'condition met\n', delayMs: 400 },
    ]);
    expect((await manager.ensure('iptables')).state).toBe('ready');
    const lines = d.commandLines();
    expect(lines.findIndex((l) => l.startsWith('kind load docker-image --name dplab-iptables '))).toBeGreaterThan(-1);
    expect(lines.findIndex((l) => l.startsWith('kind load docker-image --name dplab-iptables '))).toBeLessThan(
      lines.findIndex((l) => l.includes(' rollout status daemonset/kube-proxy ')),
    );
  });

  it('an image load that fails stops the wait beside it: the run fails at the load, the wait is skipped, the cluster goes', async () => {
    const { d, manager, events } = setup('iptables', [
      // `docker image inspect` not answering within its bound is not "image absent": the load fails.
      { tool: 'docker', match: `^image inspect --format \\{\\{\\.Id\\}\\} ${PRESENT_IMAGE.replace(/[.]/g, '\\.')}$`, delayMs: 10_000 },
      { tool: 'kubectl', match: ' wait --for=condition=Ready nodes --all ', stdout: 'condition met\n', delayMs: 10_000 },
    ]);
    const err = await manager.ensure('iptables', { timeouts: { quick: 300 } }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/failed at "Load lab images into the nodes"/);
    const phases = events.filter((e) => e.type === 'action').map((e) => `${e.phase} ${e.id}`);
    expect(phases).toContain('fail images');
    expect(phases).toContain('skip nodes-ready');
    expect(phases.some((p) => p.startsWith('start dataplane'))).toBe(false);
    expect(d.commandLines().some((l) => l.startsWith('kind delete cluster --name dplab-iptables'))).toBe(true);
    expect((await manager.status('iptables')).state).toBe('absent');
  });

  it('a wait that fails while the images load stops the load: the run fails at the wait, the load is skipped, the cluster goes', async () => {
    const { d, manager, events } = setup('iptables', [
      { tool: 'kind', match: '^load docker-image ', delayMs: 10_000 },
      {
        tool: 'kubectl',
        match: ' wait --for=condition=Ready nodes --all ',
        stderr: 'error: timed out waiting for the condition\n',
        exit: 1,
      },
    ]);
    const err = await manager.ensure('iptables').then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/failed at "Wait for the nodes to be Ready"/);
    const phases = events.filter((e) => e.type === 'action').map((e) => `${e.phase} ${e.id}`);
    expect(phases).toContain('fail nodes-ready');
    expect(phases).toContain('skip images');
    const lines = d.commandLines();
    expect(lines.findIndex((l) => l.startsWith('kind delete cluster --name dplab-iptables'))).toBeGreaterThan(
      lines.findIndex((l) => l.startsWith('kind load docker-image')),
    );
    const last = await manager.status('iptables');
    expect(last.progress?.actions.find((a) => a.id === 'images')?.state).toBe('skipped');
  });

  it('reuses a healthy cluster without creating anything', async () => {
    const { d, manager, events } = setup('nftables');
    d.setState({ created: 'yes' });
    mkdirSync(dirname(kubeconfigPath('nftables')), { recursive: true });
    writeFileSync(kubeconfigPath('nftables'), 'apiVersion: v1\n');
    const status = await manager.ensure('nftables');
    expect(status.state).toBe('ready');
    expect(d.commandLines().some((l) => l.startsWith('kind create'))).toBe(false);
    expect(events.some((e) => e.type === 'info' && /Reusing/.test(e.message))).toBe(true);
  });

  it('re-exports a missing kubeconfig of an existing cluster, into the state folder', async () => {
    const { d, manager } = setup('ipvs');
    d.setState({ created: 'yes' });
    await manager.ensure('ipvs');
    expect(d.commandLines()).toContain(`kind export kubeconfig --name dplab-ipvs --kubeconfig ${kubeconfigPath('ipvs')}`);
  });

  it('replaces a broken leftover cluster', async () => {
    const { d, manager } = setup('iptables', [
      {
        tool: 'kubectl',
        match: ' get nodes -o json$',
        when: { created: 'yes', fixed: 'no' },
        stdout: nodesJson('iptables', false),
        set: { fixed: 'yes' },
      },
    ]);
    d.setState({ created: 'yes', fixed: 'no' });
    mkdirSync(dirname(kubeconfigPath('iptables')), { recursive: true });
    writeFileSync(kubeconfigPath('iptables'), 'apiVersion: v1\n');
    await manager.ensure('iptables');
    const lines = d.commandLines();
    expect(lines.findIndex((l) => l.startsWith('kind delete cluster'))).toBeLessThan(
      lines.findIndex((l) => l.startsWith('kind create cluster')),
    );
  });

  it('coalesces two concurrent ensure calls into one run', async () => {
    const { d, manager } = setup('iptables');
    const [a, b] = await Promise.all([manager.ensure('iptables'), manager.ensure('iptables')]);
    expect(a).toEqual(b);
    expect(d.commandLines().filter((l) => l.startsWith('kind create cluster'))).toHaveLength(1);
  });

  it('never lets kind, kubectl, helm or cilium fall back to ~/.kube/config', async () => {
    const { d, manager } = setup('cilium', [], { without: ['cilium'] });
    await manager.ensure('cilium');
    await manager.delete('cilium');
    const stateKube = dirname(kubeconfigPath('cilium'));
    for (const c of d.calls()) {
      const flag = c.argv.indexOf('--kubeconfig');
      const viaFlag = flag >= 0 ? c.argv[flag + 1] : undefined;
      const needs = c.tool === 'kubectl' || c.tool === 'helm' || (c.tool === 'kind' && ['create', 'delete', 'export'].includes(c.argv[0]));
      if ((c.tool === 'kubectl' || c.tool === 'helm') && c.argv[0] === 'version') continue; // client-only; kubectl gets /dev/null
      if (needs) expect(viaFlag?.startsWith(stateKube), `${c.tool} ${c.argv.join(' ')}`).toBe(true);
      if (c.tool === 'cilium' && c.argv[0] === 'install') expect(c.kubeconfig?.startsWith(stateKube)).toBe(true);
    }
  });
});

describe('a cluster started ahead', () => {
  it('says so in its status while it starts and once ready, until it is deleted', async () => {
    const { manager, events } = setup('nftables');
    const ready = await manager.ensure('nftables', { ahead: true });
    expect(ready.state).toBe('ready');
    const statuses = events.flatMap((e) => (e.type === 'status' ? [e.status] : []));
    expect(statuses.map((s) => `${s.state}:${s.startedAhead === true}`)).toEqual(['provisioning:true', 'ready:true']);
    writeFileSync(kubeconfigPath('nftables'), 'apiVersion: v1\n');
    expect((await manager.status('nftables')).startedAhead).toBe(true);
    expect((await manager.status('iptables')).startedAhead).toBeUndefined();
    await manager.delete('nftables');
    expect(events.at(-1)).toMatchObject({ type: 'status', status: { state: 'absent' } });
    expect((events.at(-1) as Extract<ClusterEvent, { type: 'status' }>).status.startedAhead).toBeUndefined();
    // Started again by the learner, it is theirs: no mark.
    await manager.ensure('nftables');
    expect((await manager.status('nftables')).startedAhead).toBeUndefined();
  });
});

describe('delete and status', () => {
  it('delete removes the cluster and its kubeconfig; status is cheap and reports absent', async () => {
    const { d, manager } = setup('iptables');
    await manager.ensure('iptables');
    writeFileSync(kubeconfigPath('iptables'), 'apiVersion: v1\n'); // real kind writes it; the double does not
    const before = d.calls().length;
    const all = await manager.statusAll();
    expect(all.map((s) => `${s.mode}:${s.state}`)).toEqual(['iptables:ready', 'ipvs:absent', 'nftables:absent', 'cilium:absent']);
    // One `kind get clusters` plus the nodes of the one existing cluster.
    expect(d.commandLines().slice(before)).toEqual([
      'kind get clusters',
      `kubectl --kubeconfig ${kubeconfigPath('iptables')} get nodes -o json`,
    ]);
    await manager.delete('iptables');
    expect(existsSync(kubeconfigPath('iptables'))).toBe(false);
    expect((await manager.status('iptables')).state).toBe('absent');
  });

  it('reports broken when nodes are not Ready', async () => {
    const { d, manager } = setup('ipvs', [
      { tool: 'kubectl', match: ' get nodes -o json$', when: { created: 'yes' }, stdout: nodesJson('ipvs', false) },
    ]);
    d.setState({ created: 'yes' });
    const s = await manager.status('ipvs');
    expect(s).toMatchObject({ state: 'broken', nodes: 3, readyNodes: 0 });
    expect(s.error?.message).toMatch(/0 of 3 nodes are Ready/);
  });

  it('status says plainly when the Docker daemon is down', async () => {
    const { manager } = setup('iptables', [
      {
        tool: 'kind',
        match: '^get clusters$',
        stderr: `ERROR: failed to list clusters: command "docker ps -a" failed with error: exit status 1\nCommand Output: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n`,
        exit: 1,
      },
    ]);
    const all = await manager.statusAll();
    expect(all.every((s) => s.state === 'absent' && /Docker daemon is not reachable/.test(s.error?.message ?? ''))).toBe(true);
  });
});
