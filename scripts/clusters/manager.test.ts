import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installDoubles, type Doubles, type DoublesOptions } from '../../test/fixtures/doubles.ts';
import {
  ABSENT_IMAGE,
  FAST_TIMEOUTS,
  LAB_NODE_IMAGE,
  PRESENT_IMAGE,
  fakeSystem,
  nodesJson,
  scenario,
} from '../../test/fixtures/cluster-scenarios.ts';
import { ClusterManager, type ClusterEvent } from './manager.ts';
import { COREDNS_PROBE_PATCH } from './actions.ts';
import { kubeconfigPath, MODES, type Mode } from '../catalogue/modes.ts';
import { CILIUM_VERSION, NODE_IMAGE } from '../base/versions.ts';
import { stateDir } from '../base/paths.ts';
import { parse } from 'yaml';
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
/** The waits beside `kind create` (kubeadm under way, a worker's containerd answering): they ask each second, so their count varies. */
const isKubeadmProbe = (l: string) =>
  /^docker exec \S+-control-plane test -f \/etc\/kubernetes\/pki\/ca\.crt$/.test(l) ||
  /^docker exec \S+ ctr --namespace k8s\.io version$/.test(l);
/** The workers' first images unpacked beside `kind create`. */
const isUnpackLine = (l: string) => /^docker exec \S+-worker\d* sh -c pause=/.test(l);
/** The crash watch beside a DaemonSet's rollout (crash-watch.ts): it reads the pods while the rollout waits. */
const isCrashWatchLine = (l: string) => / -n kube-system get pods -l \S+ -o json$/.test(l);
/** The provisioning lines in their fixed order, without what runs beside: the CoreDNS patch and its wait, the crash watch. */
const provisioningLines = (doubles: Doubles) =>
  allProvisioningLines(doubles).filter((l) => !isKubeadmProbe(l) && !isDnsPatchLine(l) && !isUnpackLine(l) && !isCrashWatchLine(l));
/** The first lines of a start after the cluster list: the lab images looked for, kind's node image and the one with the lab images inside. */
const imageLines = [
  `docker image inspect --format {{.Id}} ${PRESENT_IMAGE}`,
  `docker image inspect --format {{.Id}} ${ABSENT_IMAGE}`,
  `docker image inspect --format {{.Id}} ${NODE_IMAGE}`,
  `docker image inspect --format {{.Id}} ${LAB_NODE_IMAGE}`,
];

describe('ensure: exact command lines per mode', () => {
  for (const mode of MODES.filter((m) => m !== 'cilium')) {
    it(mode, async () => {
      const { d, manager } = setup(mode, [
        // The nodes exist (and kubeadm runs) from the start of a create that takes a while, as kind's does.
        {
          tool: 'kind',
          match: `^create cluster --name dplab-${mode} `,
          delayMs: 1_500,
          set: { created: 'yes' },
          writesAfter: '--kubeconfig',
          writes: 'apiVersion: v1\n',
        },
      ]);
      const status = await manager.ensure(mode);
      expect(status).toMatchObject({ mode, state: 'ready', nodes: 3, readyNodes: 3, proxyMode: mode });
      const kc = kubeconfigPath(mode);
      const name = `dplab-${mode}`;
      const config = join(stateDir(), 'kind', `${name}.yaml`);
      expect(provisioningLines(d)).toEqual([
        'kind get clusters',
        // The lab images go in with the workers' node image, built on an earlier start: nothing is loaded beside kubeadm.
        ...imageLines,
        `kind create cluster --name ${name} --config ${config} --kubeconfig ${kc} --wait 0s`,
        // Every node of the kind config registered before the Ready wait (which sees only those that did).
        `kubectl --kubeconfig ${kc} get nodes -o json`,
        `kubectl --kubeconfig ${kc} wait --for=condition=Ready nodes --all --timeout=4s`,
        `kubectl --kubeconfig ${kc} -n kube-system rollout status daemonset/kube-proxy --timeout=4s`,
        `kubectl --kubeconfig ${kc} -n kube-system rollout status deployment/coredns --timeout=4s`,
        `kubectl --kubeconfig ${kc} get nodes -o json`,
      ]);
      // The mode's config with the workers, and only they, starting from the image with the lab images.
      const generated = parse(readFileSync(config, 'utf8')) as { nodes: Array<{ role: string; image: string }> };
      expect(generated.nodes.map((n) => `${n.role} ${n.image}`)).toEqual([
        `control-plane ${NODE_IMAGE}`,
        `worker ${LAB_NODE_IMAGE}`,
        `worker ${LAB_NODE_IMAGE}`,
      ]);
      const all = allProvisioningLines(d);
      // Each worker unpacks the sandbox's, kind's CNI's, kube-proxy's and the labs' images while
      // kind creates the cluster, once its containerd answers: its first containers start at once.
      const unpacks = all.filter(isUnpackLine);
      expect(unpacks.map((l) => l.split(' ')[2]).sort()).toEqual([`${name}-worker`, `${name}-worker2`]);
      for (const l of unpacks)
        expect(l.endsWith(` sh --kind-cni registry.k8s.io/kube-proxy:v1.35.0 ${PRESENT_IMAGE} ${ABSENT_IMAGE}`)).toBe(true);
      expect(Math.max(...unpacks.map((l) => all.indexOf(l)))).toBeLessThan(
        all.findIndex((l) => l.includes(' wait --for=condition=Ready nodes ')),
      );
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
    expect(lines.slice(1, 5)).toEqual(imageLines);
    expect(lines[5]).toBe(
      `kind create cluster --name dplab-cilium --config ${join(stateDir(), 'kind', 'dplab-cilium.yaml')} --kubeconfig ${kc} --wait 0s`,
    );
    expect(lines[6]).toBe(`cilium install --version ${CILIUM_VERSION} ${values}`);
    expect(lines.slice(7, 12)).toEqual(ciliumTail(kc));
    const install = d.calls().find((c) => c.tool === 'cilium' && c.argv[0] === 'install');
    expect(install?.kubeconfig).toBe(kc);
  });

  it('cilium, through helm when the cilium CLI is missing', async () => {
    const { d, manager } = setup('cilium', [], { without: ['cilium'] });
    await manager.ensure('cilium');
    const kc = kubeconfigPath('cilium');
    const lines = provisioningLines(d);
    expect(lines[6]).toBe(
      `helm upgrade --install cilium cilium --repo https://helm.cilium.io --version ${CILIUM_VERSION} --namespace kube-system --kubeconfig ${kc} ${values}`,
    );
    expect(lines.slice(7, 12)).toEqual(ciliumTail(kc));
  });
});

describe('ensure: pipeline, events, reuse, coalescing', () => {
  it('emits start/end per action in order, notes skipped images, then a ready status', async () => {
    const { manager, events } = setup('iptables');
    await manager.ensure('iptables');
    const actions = events.filter((e) => e.type === 'action').map((e) => `${e.phase} ${e.id}`);
    expect(actions).toEqual(
      ['preflight', 'images', 'create', 'nodes-ready', 'dataplane', 'coredns'].flatMap((id) => [`start ${id}`, `end ${id}`]),
    );
    expect(events.filter((e) => e.type === 'info').map((e) => e.message)).toEqual([expect.stringContaining(`Skipped ${ABSENT_IMAGE}`)]);
    const statuses = events.filter((e) => e.type === 'status').map((e) => e.status.state);
    expect(statuses).toEqual(['provisioning', 'ready']);
    const last = await manager.status('iptables');
    expect(last.progress?.actions.every((a) => a.state === 'done')).toBe(true);
  });

  it('the first start builds the node image with the lab images, as kind builds its own, and tidies older ones', async () => {
    const { d, manager, events } = setup('iptables');
    d.setState({ labNodeImage: 'absent' });
    expect((await manager.ensure('iptables')).state).toBe('ready');
    const lines = provisioningLines(d);
    const from = lines.indexOf(`docker image inspect --format {{.Id}} ${LAB_NODE_IMAGE}`);
    const build = lines.slice(
      from + 1,
      lines.findIndex((l) => l.startsWith('kind create')),
    );
    const container = /dplab-lab-node-[0-9a-f]+/.exec(build.find((l) => l.startsWith('docker run ')) ?? '')?.[0];
    expect(container).toBeDefined();
    const archive = /^docker save --output (\S+) /.exec(build[1])?.[1];
    expect(
      build.map(
        (l) =>
          l
            .replace(container!, '<c>')
            .replace(archive ?? '<none>', '<tar>')
            .split('\n')[0],
      ),
    ).toEqual([
      `docker image inspect --format {{json .Config.Entrypoint}}|{{json .Config.Cmd}} ${NODE_IMAGE}`,
      `docker save --output <tar> ${PRESENT_IMAGE}`,
      `docker run --detach --name <c> --entrypoint sleep --security-opt seccomp=unconfined ${NODE_IMAGE} infinity`,
      'docker cp <tar> <c>:/tmp/dplab-images.tar',
      // containerd alone in the container, the images imported without unpacking, containerd stopped.
      'docker exec <c> sh -c set -e',
      `docker commit --change ENTRYPOINT ["/usr/local/bin/entrypoint","/sbin/init"] --change CMD [] --change LABEL dplab.lab-node-image=${PRESENT_IMAGE} <c> ${LAB_NODE_IMAGE}`,
      'docker rm --force <c>',
      'docker image ls --filter label=dplab.lab-node-image --format {{.Repository}}:{{.Tag}}',
      'docker image rm dplab.local/kind-node-labs:00000000000000aa',
    ]);
    expect(build[4]).toContain('ctr --namespace k8s.io images import --all-platforms --no-unpack --digests "$1"');
    expect(existsSync(archive!)).toBe(false);
    expect(events.filter((e) => e.type === 'info').map((e) => e.message)).toContainEqual(
      expect.stringMatching(new RegExp(`^Built ${LAB_NODE_IMAGE}: the node image with ${PRESENT_IMAGE} inside, in \\d+ s`)),
    );
    // The cluster's workers start from it.
    expect(lines.find((l) => l.startsWith('kind create'))).toContain(join(stateDir(), 'kind', 'dplab-iptables.yaml'));
  });

  it("kind's node image not here yet: pulled first (as kind would), then the lab images go in", async () => {
    const { d, manager } = setup('iptables');
    d.setState({ nodeImage: 'absent', labNodeImage: 'absent' });
    expect((await manager.ensure('iptables')).state).toBe('ready');
    const lines = provisioningLines(d);
    expect(lines.indexOf(`docker pull ${NODE_IMAGE}`)).toBeGreaterThan(
      lines.indexOf(`docker image inspect --format {{.Id}} ${NODE_IMAGE}`),
    );
    expect(lines.indexOf(`docker pull ${NODE_IMAGE}`)).toBeLessThan(lines.findIndex((l) => l.startsWith('docker commit ')));
  });

  it("an image Docker cannot save (multi-arch under the containerd image store) is a note: the cluster starts from kind's image and is kept", async () => {
    const { d, manager, events } = setup('iptables');
    d.setState({ labNodeImage: 'absent', saveFails: 'yes' });
    expect((await manager.ensure('iptables')).state).toBe('ready');
    expect(d.commandLines().some((l) => l.startsWith('kind delete'))).toBe(false);
    expect(d.commandLines().some((l) => l.startsWith('docker run '))).toBe(false);
    expect(d.commandLines().find((l) => l.startsWith('kind create'))).toContain(`--config ${process.cwd()}/kind-configs/iptables.yaml `);
    expect(events.filter((e) => e.type === 'info').map((e) => e.message)).toContainEqual(
      'Could not put the lab images into the node image (Error response from daemon: unable to create manifests file: NotFound: content digest sha256:b1ad: not found); the nodes will pull them when a lab needs them.',
    );
  });

  it('Docker not answering about an image fails the start at the images step, before anything is made', async () => {
    const { d, manager, events } = setup('iptables', [
      // `docker image inspect` not answering within its bound is not "image absent".
      { tool: 'docker', match: `^image inspect --format \\{\\{\\.Id\\}\\} ${PRESENT_IMAGE.replace(/[.]/g, '\\.')}$`, delayMs: 10_000 },
    ]);
    const err = await manager.ensure('iptables', { timeouts: { quick: 300 } }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/failed at "Prepare the node image with the lab images"/);
    const phases = events.filter((e) => e.type === 'action').map((e) => `${e.phase} ${e.id}`);
    expect(phases).toEqual(['start preflight', 'end preflight', 'start images', 'fail images']);
    expect(d.commandLines().some((l) => l.startsWith('kind create'))).toBe(false);
    expect((await manager.status('iptables')).state).toBe('absent');
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
