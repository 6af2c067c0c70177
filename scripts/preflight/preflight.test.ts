import { describe, expect, it } from 'vitest';
import { installDoubles } from '../../test/fixtures/doubles.ts';
import { DAEMON_DOWN_STDERR, fakeSystem, scenario } from '../../test/fixtures/cluster-scenarios.ts';
import { formatFindings } from './format.ts';
import { preflightError, runPreflight } from './index.ts';
import { checkInotify, checkIpvsModules } from './kernel.ts';
import { checkMemory, MEMORY_PER_CLUSTER_BYTES } from './memory.ts';

const GiB = 1024 ** 3;

describe('runPreflight', () => {
  it('all ok on a good Linux host', async () => {
    installDoubles(scenario('cilium'));
    const r = await runPreflight({ modes: ['ipvs', 'cilium'], system: fakeSystem() });
    expect(r.findings.map((f) => `${f.id}:${f.status}`)).toEqual([
      'docker-cli:ok', 'docker-daemon:ok', 'docker-desktop:ok', 'kind:ok', 'kubectl:ok', 'cilium-installer:ok', 'inotify:ok', 'ipvs-modules:ok', 'memory:ok',
    ]);
    expect(r.ok).toBe(true);
    expect(r.ciliumInstaller).toBe('cilium');
    expect(preflightError(r)).toBeUndefined();
  });

  it('Docker Desktop: a warning that node IPs are not reachable, IPVS not checkable', async () => {
    installDoubles(scenario('ipvs', [{ tool: 'docker', match: '^info ', stdout: JSON.stringify({ ServerVersion: '28', OperatingSystem: 'Docker Desktop', Name: 'docker-desktop', MemTotal: 8 * GiB }) }]));
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
    expect(r.findings.filter((f) => f.status === 'fail').map((f) => f.id)).toEqual(['docker-cli', 'docker-daemon', 'kind', 'kubectl', 'cilium-installer']);
    const err = preflightError(r)!;
    expect(err.message).toBe('Docker is not installed: `docker` was not found on PATH.');
    expect(err.details).toMatch(/kind is not installed/);
    expect(formatFindings(r.findings)).toMatch(/5 problems must be fixed/);
  });

  it('daemon down keeps the CLI version', async () => {
    installDoubles(scenario('iptables', [{ tool: 'docker', match: '^info ', stdout: '{"ClientInfo":{"Version":"28.2.2"}}', stderr: DAEMON_DOWN_STDERR, exit: 1 }]));
    const r = await runPreflight({ modes: ['iptables'], system: fakeSystem() });
    expect(r.findings[0]).toMatchObject({ id: 'docker-cli', status: 'ok', detail: 'docker 28.2.2' });
    expect(r.findings[1]).toMatchObject({ id: 'docker-daemon', status: 'fail' });
  });
});

describe('host checks', () => {
  it('inotify: warns with the sysctl fix below kind’s recommended limits', () => {
    const f = checkInotify(fakeSystem({ files: { '/proc/sys/fs/inotify/max_user_watches': '8192', '/proc/sys/fs/inotify/max_user_instances': '128' } }));
    expect(f.status).toBe('warn');
    expect(f.fix).toMatch(/^sudo sysctl fs\.inotify\.max_user_watches=524288 fs\.inotify\.max_user_instances=512/);
  });

  it('IPVS modules: fail with modprobe on Linux; built-in modules count', () => {
    const missing = checkIpvsModules(fakeSystem({ files: { '/proc/modules': 'nf_conntrack 1 0 - Live 0x0\n' } }));
    expect(missing).toMatchObject({ status: 'fail', fix: 'sudo modprobe ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh nf_conntrack' });
    expect(missing.detail).toMatch(/ip_vs, ip_vs_rr, ip_vs_wrr, ip_vs_sh/);
    const builtin = checkIpvsModules(fakeSystem({ files: { '/proc/modules': '' }, exists: (p) => p.startsWith('/sys/module/') }));
    expect(builtin.status).toBe('ok');
  });

  it('memory: 3 GiB per cluster; warn below, fail under half', () => {
    expect(MEMORY_PER_CLUSTER_BYTES).toBe(3 * GiB);
    expect(checkMemory(fakeSystem({ memAvailableBytes: () => 4 * GiB }), 1).status).toBe('ok');
    expect(checkMemory(fakeSystem({ memAvailableBytes: () => 4 * GiB }), 2).status).toBe('warn');
    expect(checkMemory(fakeSystem({ memAvailableBytes: () => 2 * GiB }), 2).status).toBe('fail');
  });
});
