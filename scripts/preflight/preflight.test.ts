import { describe, expect, it } from 'vitest';
import { installDoubles } from '../../test/fixtures/doubles.ts';
import { DAEMON_DOWN_STDERR, dockerInfo, fakeSystem, scenario } from '../../test/fixtures/cluster-scenarios.ts';
import { formatFindings } from './format.ts';
import { preflightError, runPreflight } from './index.ts';
import { checkCgroups, checkInotify, checkKernelModules, checkKernelVersion } from './kernel.ts';
import { isRemoteDockerHost, nodeIpsReachableFromHost, type DockerInfo } from './docker.ts';
import { checkMemory } from './memory.ts';
import type { Finding, PreflightSystem } from './types.ts';
import { kubectlFinding } from './tools.ts';
import { CLUSTER_FOOTPRINT, MODE_INFO } from '../catalogue/modes.ts';

const GiB = 1024 ** 3;
/** The IPVS mode's kernel-module finding (its record's `host.kernelModules`). */
const checkIpvs = (system: PreflightSystem, docker?: DockerInfo): Finding => checkKernelModules(MODE_INFO.ipvs, system, docker)!;

describe('runPreflight', () => {
  it('all ok on a good Linux host', async () => {
    installDoubles(scenario('cilium'));
    const r = await runPreflight({ modes: ['ipvs', 'cilium'], system: fakeSystem() });
    expect(r.findings.map((f) => `${f.id}:${f.status}`)).toEqual([
      'docker-cli:ok',
      'docker-daemon:ok',
      'docker-desktop:ok',
      'kind:ok',
      'kubectl:ok',
      'cilium-installer:ok',
      'inotify:ok',
      'ipvs-modules:ok',
      'kernel-version:ok',
      'cgroups:ok',
      'memory:ok',
    ]);
    expect(r.ok).toBe(true);
    expect(r.ciliumInstaller).toBe('cilium');
    expect(preflightError(r)).toBeUndefined();
  });

  it('Docker Desktop: a warning that node IPs are not reachable, IPVS not checkable', async () => {
    installDoubles(
      scenario('ipvs', [
        {
          tool: 'docker',
          match: '^info ',
          stdout: JSON.stringify({ ServerVersion: '28', OperatingSystem: 'Docker Desktop', Name: 'docker-desktop', MemTotal: 8 * GiB }),
        },
      ]),
    );
    const r = await runPreflight({ modes: ['ipvs'], system: fakeSystem({ platform: 'darwin' }) });
    const byId = Object.fromEntries(r.findings.map((f) => [f.id, f]));
    expect(byId['docker-desktop']).toMatchObject({ status: 'warn', detail: expect.stringMatching(/not reachable/) });
    expect(byId['ipvs-modules'].status).toBe('warn');
    expect(byId.memory).toMatchObject({ status: 'ok', detail: expect.stringMatching(/the Docker VM has/) });
    expect(r.ok).toBe(true);
  });

  it('nothing installed: every tool fails with its own fix, first failure is the headline', async () => {
    installDoubles({ rules: [] }, { without: ['docker', 'kind', 'kubectl', 'cilium', 'helm'] });
    const r = await runPreflight({ modes: ['cilium'], system: fakeSystem() });
    expect(r.findings.filter((f) => f.status === 'fail').map((f) => f.id)).toEqual([
      'docker-cli',
      'docker-daemon',
      'kind',
      'kubectl',
      'cilium-installer',
    ]);
    const err = preflightError(r)!;
    expect(err.message).toBe('Docker is not installed: `docker` was not found on PATH.');
    expect(err.details).toMatch(/kind is not installed/);
    expect(formatFindings(r.findings)).toMatch(/5 problems must be fixed/);
  });

  it("the nftables mode's record asks for a node image with Kubernetes ≥ 1.31 (and kind ≥ 0.23); the other modes do not", async () => {
    installDoubles(scenario('nftables'));
    const nft = await runPreflight({ modes: ['nftables'], system: fakeSystem() });
    expect(nft.findings.find((f) => f.id === 'node-image')).toEqual({
      id: 'node-image',
      title: 'Node image (nftables)',
      status: 'ok',
      detail: "Kubernetes 1.35.0 supports kube-proxy's nftables mode (needs 1.31.0+).",
      fix: undefined,
    });
    const others = await runPreflight({ modes: ['iptables', 'ipvs', 'cilium'], system: fakeSystem() });
    expect(others.findings.some((f) => f.id === 'node-image')).toBe(false);
  });

  it('daemon down keeps the CLI version', async () => {
    installDoubles(
      scenario('iptables', [
        { tool: 'docker', match: '^info ', stdout: '{"ClientInfo":{"Version":"28.2.2"}}', stderr: DAEMON_DOWN_STDERR, exit: 1 },
      ]),
    );
    const r = await runPreflight({ modes: ['iptables'], system: fakeSystem() });
    expect(r.findings[0]).toMatchObject({ id: 'docker-cli', status: 'ok', detail: 'docker 28.2.2' });
    expect(r.findings[1]).toMatchObject({ id: 'docker-daemon', status: 'fail' });
  });

  it('a daemon that runs but refuses this user (not in the docker group, or a workshop seat’s own user) is said as such', async () => {
    // What docker 28.2.2 prints to a user outside the socket's group (measured with setpriv here).
    const denied =
      'permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: Get "http://%2Fvar%2Frun%2Fdocker.sock/v1.50/info": dial unix /var/run/docker.sock: connect: permission denied\n';
    installDoubles(
      scenario('iptables', [{ tool: 'docker', match: '^info ', stdout: '{"ClientInfo":{"Version":"28.2.2"}}', stderr: denied, exit: 1 }]),
    );
    const r = await runPreflight({ modes: ['iptables'], system: fakeSystem() });
    expect(r.findings[1]).toMatchObject({
      id: 'docker-daemon',
      status: 'fail',
      detail: 'Docker runs, but this user may not use it: permission denied on its socket.',
      fix: expect.stringContaining('usermod -aG docker'),
    });
    expect(r.findings[1]?.fix).toContain('Start and Check on the lab page');
  });
});

describe('docker info read closely', () => {
  it('Docker CLI < 28.1 exits 0 with the daemon down: ServerErrors and an empty ServerVersion say so', async () => {
    // What `docker info --format '{{json .}}'` prints then: client fields, empty server fields, ServerErrors.
    const down = JSON.stringify({
      ID: '',
      Containers: 0,
      ServerVersion: '',
      ClientInfo: { Version: '27.5.1' },
      ServerErrors: ['Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?'],
    });
    installDoubles(scenario('iptables', [{ tool: 'docker', match: '^info ', stdout: down }]));
    const r = await runPreflight({ modes: ['iptables'], system: fakeSystem() });
    expect(r.findings[0]).toMatchObject({ id: 'docker-cli', status: 'ok', detail: 'docker 27.5.1' });
    expect(r.findings[1]).toMatchObject({
      id: 'docker-daemon',
      status: 'fail',
      detail: expect.stringMatching(/^Docker is not running.*Is the docker daemon running/),
    });
    expect(r.ok).toBe(false);
    expect(r.docker).toBeUndefined();
  });

  it('an empty ServerVersion alone is a daemon that did not answer', async () => {
    installDoubles(
      scenario('iptables', [
        { tool: 'docker', match: '^info ', stdout: JSON.stringify({ ServerVersion: '', ClientInfo: { Version: '26.1.0' } }) },
      ]),
    );
    const r = await runPreflight({ modes: ['iptables'], system: fakeSystem() });
    expect(r.findings.find((f) => f.id === 'docker-daemon')?.status).toBe('fail');
  });

  it('rootless Docker: node IPs are not reachable from here, so the probe goes through the helper container', async () => {
    installDoubles(
      scenario('iptables', [
        {
          tool: 'docker',
          match: '^info ',
          stdout: dockerInfo({ SecurityOptions: ['name=seccomp,profile=builtin', 'name=rootless', 'name=cgroupns'] }),
        },
      ]),
    );
    const r = await runPreflight({ modes: ['iptables'], system: fakeSystem() });
    expect(r.docker?.rootless).toBe(true);
    expect(r.findings.find((f) => f.id === 'docker-desktop')).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/^Rootless Docker/),
    });
    expect(r.findings.find((f) => f.id === 'docker-daemon')?.detail).toMatch(/\(rootless\)$/);
  });
});

describe('host checks', () => {
  it('inotify: warns with the sysctl fix below kind’s recommended limits', () => {
    const f = checkInotify(
      fakeSystem({ files: { '/proc/sys/fs/inotify/max_user_watches': '8192', '/proc/sys/fs/inotify/max_user_instances': '128' } }),
    );
    expect(f.status).toBe('warn');
    expect(f.fix).toMatch(/^sudo sysctl fs\.inotify\.max_user_watches=524288 fs\.inotify\.max_user_instances=512/);
  });

  it('IPVS modules not loaded: a warning (kube-proxy loads them itself), ip_vs_lc included; built-in modules count', () => {
    const missing = checkIpvs(fakeSystem({ files: { '/proc/modules': 'nf_conntrack 1 0 - Live 0x0\n' } }));
    expect(missing).toMatchObject({ status: 'warn', fix: 'sudo modprobe ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh ip_vs_lc nf_conntrack' });
    expect(missing.detail).toMatch(/ip_vs, ip_vs_rr, ip_vs_wrr, ip_vs_sh, ip_vs_lc.*kube-proxy loads them/);
    const builtin = checkIpvs(fakeSystem({ files: { '/proc/modules': '' }, exists: (p) => p.startsWith('/sys/module/') }));
    expect(builtin.status).toBe('ok');
  });

  it("the kernel-module finding is worded from the IPVS record's host needs, in the words it always had; modes without modules ask nothing", () => {
    const none = {
      '/proc/modules': '',
      '/proc/sys/kernel/osrelease': '6.8.0-45-generic\n',
      '/lib/modules/6.8.0-45-generic/modules.dep': '',
    };
    expect(checkIpvs(fakeSystem({ files: none }))).toEqual({
      id: 'ipvs-modules',
      title: 'IPVS kernel modules',
      status: 'fail',
      detail:
        "This kernel (6.8.0-45-generic) has no ip_vs, ip_vs_rr, ip_vs_wrr, ip_vs_sh, ip_vs_lc, nf_conntrack module to load (not in modules.dep): kube-proxy's IPVS mode cannot start on it.",
      fix: 'Use another mode, or a host kernel built with IPVS (CONFIG_IP_VS); most distribution kernels have it.',
    });
    expect(checkIpvs(fakeSystem({ platform: 'darwin' }))).toMatchObject({
      status: 'warn',
      detail:
        "Not checked: the kernel is the Docker VM's. Docker Desktop's kernel usually ships IPVS; if kube-proxy logs \"can't use the IPVS proxier\", the VM kernel lacks it.",
      fix: "If the IPVS cluster's kube-proxy fails, use another mode or a Docker VM whose kernel has ip_vs (e.g. a Linux machine).",
    });
    expect(checkIpvs(fakeSystem({ files: { '/proc/modules': '' } }), info({ remote: true, name: 'guest' })).fix).toBe(
      'On that machine: `sudo modprobe ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh ip_vs_lc nf_conntrack`; if kube-proxy logs "can\'t use the IPVS proxier", its kernel lacks ip_vs.',
    );
    expect(checkIpvs(fakeSystem({ files: { '/proc/modules': 'nf_conntrack 1 0 - Live 0x0\n' } })).detail).toBe(
      'Not loaded yet: ip_vs, ip_vs_rr, ip_vs_wrr, ip_vs_sh, ip_vs_lc. kube-proxy loads them when it starts (Kubernetes ≥ 1.27); loading them now rules out a failure later.',
    );
    for (const mode of ['iptables', 'nftables', 'cilium'] as const)
      expect(checkKernelModules(MODE_INFO[mode], fakeSystem({ files: none })), mode).toBeNull();
  });

  it('a kernel that loads no modules and has no ip_vs built in: a failure (here kube-proxy crash-looped while the doctor said "not loaded yet")', () => {
    const noModuleSupport = (builtIn: string[]) =>
      fakeSystem({
        readText: (p) => (p === '/proc/sys/kernel/osrelease' ? '6.18.44-fc-v1300\n' : undefined),
        exists: (p) => builtIn.some((m) => p === `/sys/module/${m}`),
      });
    expect(checkIpvs(noModuleSupport(['nf_conntrack']))).toEqual({
      id: 'ipvs-modules',
      title: 'IPVS kernel modules',
      status: 'fail',
      detail:
        "This kernel (6.18.44-fc-v1300) loads no modules (it has no /proc/modules) and has no ip_vs built in: kube-proxy's IPVS mode cannot start on it.",
      fix: 'Use another mode, or a host kernel built with IPVS (CONFIG_IP_VS); most distribution kernels have it.',
    });
    // ip_vs built in (it has parameters, so it shows in /sys/module): schedulers without any may not show; not a failure.
    expect(checkIpvs(noModuleSupport(['ip_vs', 'nf_conntrack'])).status).toBe('warn');
    expect(checkIpvs(noModuleSupport(['ip_vs', 'ip_vs_rr', 'ip_vs_wrr', 'ip_vs_sh', 'ip_vs_lc', 'nf_conntrack'])).status).toBe('ok');
  });

  it('IPVS modules the kernel does not have at all (absent from modules.dep): a failure', () => {
    const files = {
      '/proc/modules': '',
      '/proc/sys/kernel/osrelease': '6.8.0-45-generic\n',
      '/lib/modules/6.8.0-45-generic/modules.dep': 'kernel/net/netfilter/nf_conntrack.ko.zst: kernel/net/ipv4/nf_defrag_ipv4.ko.zst\n',
    };
    expect(checkIpvs(fakeSystem({ files }))).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/has no ip_vs, ip_vs_rr/),
    });
    const loadable = {
      ...files,
      '/lib/modules/6.8.0-45-generic/modules.dep':
        ['ip_vs', 'ip_vs_rr', 'ip_vs_wrr', 'ip_vs_sh', 'ip_vs_lc']
          .map((m) => `kernel/net/netfilter/ipvs/${m}.ko.zst: kernel/net/netfilter/nf_conntrack.ko.zst`)
          .join('\n') + '\nkernel/net/netfilter/nf_conntrack.ko.zst:\n',
    };
    expect(checkIpvs(fakeSystem({ files: loadable })).status).toBe('warn');
  });

  const info = (patch: Partial<DockerInfo>): DockerInfo => ({
    serverVersion: '28.2.2',
    operatingSystem: 'Ubuntu',
    name: 'h',
    memTotal: 0,
    desktop: false,
    rootless: false,
    kernelVersion: '6.8.0-45-generic',
    cgroupVersion: '2',
    cgroupns: true,
    remote: false,
    ...patch,
  });

  it('kernel: Cilium needs ≥ 5.10, the nftables mode ≥ 5.13; other modes do not ask', () => {
    expect(checkKernelVersion(['cilium'], info({ kernelVersion: '5.4.0-150-generic' }))).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/Cilium 1\.19\.4 needs ≥ 5\.10/),
    });
    expect(checkKernelVersion(['nftables'], info({ kernelVersion: '5.10.0-28-amd64' }))).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/nftables mode needs ≥ 5\.13/),
    });
    expect(checkKernelVersion(['cilium'], info({ kernelVersion: '5.10.0-28-amd64' }))?.status).toBe('ok');
    expect(checkKernelVersion(['nftables', 'cilium'], info({}))?.status).toBe('ok');
    expect(checkKernelVersion(['iptables', 'ipvs'], info({ kernelVersion: '4.19.0' }))).toBeNull();
    expect(checkKernelVersion(['cilium'], undefined)?.status).toBe('warn');
  });

  it('cgroups: Cilium needs cgroup v2 (fail) and private cgroup namespaces (warn)', () => {
    expect(checkCgroups(['cilium'], info({ cgroupVersion: '1' }))).toMatchObject({
      status: 'fail',
      fix: expect.stringMatching(/unified_cgroup_hierarchy/),
    });
    expect(checkCgroups(['cilium'], info({ cgroupns: false }))).toMatchObject({
      status: 'warn',
      fix: expect.stringMatching(/default-cgroupns-mode/),
    });
    expect(checkCgroups(['cilium'], info({}))?.status).toBe('ok');
    expect(checkCgroups(['iptables'], info({ cgroupVersion: '1' }))).toBeNull();
  });

  it('cgroups: v1 on a local kernel that also has cgroup v2 is a warning, as Cilium mounts it and runs there; elsewhere v1 still fails', () => {
    // /proc/filesystems as Debian 12's kernel lists it (the lines that matter).
    const hybrid = fakeSystem({ files: { '/proc/filesystems': 'nodev\tsysfs\nnodev\tcgroup\nnodev\tcgroup2\n\text4\n' } });
    expect(checkCgroups(['cilium'], info({ cgroupVersion: '1' }), hybrid)).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/kernel also has cgroup v2, which Cilium mounts for itself/),
    });
    // A kernel without it (cgroup v1 only) still fails.
    expect(
      checkCgroups(['cilium'], info({ cgroupVersion: '1' }), fakeSystem({ files: { '/proc/filesystems': 'nodev\tcgroup\n\text4\n' } }))
        ?.status,
    ).toBe('fail');
    // The file says nothing about an engine on another machine or in Docker Desktop's VM.
    expect(checkCgroups(['cilium'], info({ cgroupVersion: '1', remote: true }), hybrid)?.status).toBe('fail');
    expect(checkCgroups(['cilium'], info({ cgroupVersion: '1', desktop: true }), hybrid)?.status).toBe('fail');
    expect(checkCgroups(['cilium'], info({ cgroupVersion: '1' }), fakeSystem())?.status).toBe('fail');
  });

  it('an engine on another machine (DOCKER_HOST=tcp://…): its kernel is not read from this one', () => {
    const noIpvs = fakeSystem({
      files: { '/proc/modules': '', '/proc/sys/kernel/osrelease': '6.18.0\n', '/lib/modules/6.18.0/modules.dep': '' },
    });
    expect(checkIpvs(noIpvs, info({})).status).toBe('fail');
    expect(checkIpvs(noIpvs, info({ remote: true, name: 'guest', kernelVersion: '6.1.0-40-amd64' }))).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/guest, Linux 6\.1\.0-40-amd64/),
    });
    expect(checkInotify(fakeSystem({ files: { '/proc/sys/fs/inotify/max_user_instances': '128\n' } }), info({ remote: true })).status).toBe(
      'ok',
    );
    expect(isRemoteDockerHost('tcp://192.168.127.2:2375')).toBe(true);
    expect(isRemoteDockerHost('ssh://me@box')).toBe(true);
    expect(isRemoteDockerHost('unix:///run/docker.sock')).toBe(false);
    expect(isRemoteDockerHost(undefined)).toBe(false);
    expect(nodeIpsReachableFromHost({ desktop: false, rootless: false, remote: true }, 'linux')).toBe(false);
  });

  it('memory: per mode from CLUSTER_FOOTPRINT; warn below, fail under half', () => {
    const mem = (gib: number) => fakeSystem({ memAvailableBytes: () => gib * GiB });
    expect(CLUSTER_FOOTPRINT.iptables.memoryBytes).toBe(2 * GiB);
    expect(checkMemory(mem(3), ['iptables'], 1).status).toBe('ok');
    expect(checkMemory(mem(3), ['iptables'], 2).status).toBe('warn');
    expect(checkMemory(mem(1.5), ['iptables'], 2).status).toBe('fail');
    // Cilium's cluster is the bigger one: 3 GiB is short for it alone.
    expect(checkMemory(mem(3), ['cilium'], 1)).toMatchObject({ status: 'warn', detail: '3 GiB available; one cluster needs about 4 GiB.' });
    // The doctor over every mode: enough for a kube-proxy cluster, and it says which mode does not fit.
    const all = checkMemory(mem(3), ['iptables', 'ipvs', 'nftables', 'cilium'], 1);
    expect(all).toMatchObject({
      status: 'warn',
      detail: '3 GiB available; one cluster needs about 2 GiB (Cilium eBPF 4 GiB). Not enough for Cilium eBPF.',
    });
    expect(checkMemory(mem(8), ['iptables', 'cilium'], 1).status).toBe('ok');
  });
});

describe('tools', () => {
  it('kubectl: within one minor of the clusters’ Kubernetes passes; two minors off is said, with the fix', () => {
    expect(kubectlFinding('Client Version: v1.35.0').status).toBe('ok');
    expect(kubectlFinding('Client Version: v1.34.2').status).toBe('ok');
    expect(kubectlFinding('Client Version: v1.36.1').status).toBe('ok');
    const old = kubectlFinding('Client Version: v1.33.4');
    expect(old).toMatchObject({ status: 'warn', fix: expect.stringContaining('Install kubectl 1.35') });
    expect(old.detail).toContain('1.34 to 1.36');
    expect(kubectlFinding('Client Version: v1.37.0').status).toBe('warn');
    expect(kubectlFinding('something else').status).toBe('warn');
  });

  it('a missing cilium CLI and helm must be fixed for the Cilium mode only', async () => {
    installDoubles({ rules: [] }, { without: ['cilium', 'helm'] });
    const cilium = await runPreflight({ modes: ['cilium'], system: fakeSystem() });
    expect(cilium.findings.find((f) => f.id === 'cilium-installer')?.status).toBe('fail');
    const every = await runPreflight({ modes: ['iptables', 'ipvs', 'nftables', 'cilium'], system: fakeSystem() });
    expect(every.findings.find((f) => f.id === 'cilium-installer')).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('The other modes do not need them.'),
    });
    const iptables = await runPreflight({ modes: ['iptables'], system: fakeSystem() });
    expect(iptables.findings.some((f) => f.id === 'cilium-installer')).toBe(false);
  });
});
