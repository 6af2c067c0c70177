// Live reads through the real command seam, with the test doubles standing in for kind, kubectl
// and docker: which commands run, how IPVS/Cilium entries get names, and every failure's wording.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { installDoubles, type Rule } from '../../test/fixtures/doubles.ts';
import { DAEMON_DOWN_STDERR } from '../../test/fixtures/cluster-scenarios.ts';
import { explain } from '../commands/explain.ts';
import { commandContext } from '../commands/command.ts';
import type { Mode } from '../catalogue/modes.ts';
import { DplabError } from '../base/errors.ts';
import { defaultNode, explainLive, readDataplane, serviceNames, type KubeService } from './live.ts';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const fixture = (path: string) => readFileSync(join(FIXTURES, path), 'utf8');

type Port = NonNullable<NonNullable<KubeService['spec']>['ports']>[number];
const svc = (
  ns: string,
  name: string,
  clusterIP: string,
  ports: Port[],
  extra: Partial<NonNullable<KubeService['spec']>> & { type?: string } = {},
): KubeService => ({ metadata: { namespace: ns, name }, spec: { clusterIP, ports, ...extra } });
/** The cluster's Services as kubectl prints them; `ip` is web's ClusterIP (the IPVS cluster has its own subnet). */
function servicesJson(ip = '10.96.45.112') {
  return JSON.stringify({
    items: [
      svc('default', 'web', ip, [{ port: 80, protocol: 'TCP', nodePort: 30080 }], { type: 'NodePort' }),
      svc('default', 'web-headless', 'None', [{ port: 80, protocol: 'TCP' }]),
      svc('default', 'lonely', '10.96.7.7', [{ port: 80, protocol: 'TCP' }]),
      svc('kube-system', 'kube-dns', '10.96.0.10', [
        { name: 'dns', port: 53, protocol: 'UDP' },
        { name: 'dns-tcp', port: 53, protocol: 'TCP' },
      ]),
    ],
  });
}
const nodesJson = JSON.stringify({
  items: [
    ['control-plane', '172.18.0.2'],
    ['worker', '172.18.0.3'],
    ['worker2', '172.18.0.4'],
  ].map(([n, ip]) => ({
    metadata: { name: n },
    status: {
      addresses: [
        { type: 'InternalIP', address: ip },
        { type: 'Hostname', address: n },
      ],
    },
  })),
});

function cluster(mode: Mode, extra: Rule[] = [], ip?: string): Rule[] {
  const name = `dplab-${mode}`;
  return [
    ...extra,
    { tool: 'kind', match: `^get nodes --name ${name}$`, stdout: `${name}-worker2\n${name}-control-plane\n${name}-worker\n` },
    { tool: 'kubectl', match: ' get services -A -o json$', stdout: servicesJson(ip) },
    { tool: 'kubectl', match: ' get nodes -o json$', stdout: nodesJson },
  ];
}

function setup(mode: Mode, rules: Rule[], opts: { kubeconfig?: boolean; without?: ('kind' | 'docker')[] } = {}) {
  const d = installDoubles({ rules }, { without: opts.without });
  if (opts.kubeconfig !== false) {
    mkdirSync(join(d.env.DPLAB_STATE_DIR, 'kube'), { recursive: true });
    writeFileSync(join(d.env.DPLAB_STATE_DIR, 'kube', `dplab-${mode}.yaml`), 'apiVersion: v1\n');
  }
  return d;
}

afterEach(() => {
  vi.restoreAllMocks();
});

async function rejection(p: Promise<unknown>): Promise<DplabError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DplabError);
  return err as DplabError;
}

const shares = (r: { frontends: Array<{ type: string; backends: Array<{ share: number }> }> }, type = 'ClusterIP') =>
  r.frontends.find((f) => f.type === type)?.backends.map((b) => Number(b.share.toFixed(3)));

// Each double is a node process: generous timeouts for loaded machines.
describe('readDataplane / explainLive', { timeout: 60_000 }, () => {
  it('iptables: dumps the first worker with iptables-save and explains web', async () => {
    const doubles = setup(
      'iptables',
      cluster('iptables', [
        { tool: 'docker', match: '^exec dplab-iptables-worker iptables-save$', stdout: fixture('iptables-save/nodeport.txt') },
      ]),
    );
    const r = await explainLive('iptables', 'default/web');
    expect(r).toMatchObject({
      service: 'default/web',
      format: 'iptables-save',
      source: 'live',
      mode: 'iptables',
      node: 'dplab-iptables-worker',
      entriesLabel: 'rules',
    });
    expect(r.nodes).toEqual(['dplab-iptables-control-plane', 'dplab-iptables-worker', 'dplab-iptables-worker2']);
    expect(shares(r)).toEqual([0.333, 0.333, 0.333]);
    expect(shares(r, 'NodePort')).toHaveLength(3);
    expect(r.mermaid).toMatch(/^flowchart TB/);
    expect(r.text).toContain('10.96.45.112:80/TCP');
    expect(doubles.commandLines()).toContain('docker exec dplab-iptables-worker iptables-save');
  });

  it('reads the node it is asked for, and refuses unknown or malformed node names', async () => {
    const doubles = setup(
      'iptables',
      cluster('iptables', [
        {
          tool: 'docker',
          match: '^exec dplab-iptables-control-plane iptables-save$',
          stdout: fixture('iptables-save/etp-local-without-endpoints.txt'),
        },
      ]),
    );
    const r = await explainLive('iptables', 'default/web', { node: 'dplab-iptables-control-plane' });
    expect(r.node).toBe('dplab-iptables-control-plane');
    expect(r.frontends.find((f) => f.type === 'NodePort')).toMatchObject({ backends: [], dropsWithoutLocalEndpoints: true });

    const unknown = await rejection(readDataplane('iptables', { node: 'dplab-iptables-worker9' }));
    expect(unknown.status).toBe(404);
    expect(unknown.message).toBe(
      'Unknown node "dplab-iptables-worker9" in dplab-iptables. Known: dplab-iptables-control-plane, dplab-iptables-worker, dplab-iptables-worker2.',
    );

    const before = doubles.calls().length;
    const bad = await rejection(readDataplane('iptables', { node: 'x; rm -rf /' }));
    expect(bad.status).toBe(400);
    expect(doubles.calls().length).toBe(before);
  });

  it('ipvs: reads /proc/net/ip_vs and names the virtual servers from the Services and node addresses', async () => {
    // The IPVS cluster's Services live in 10.97.0.0/16: move web's ClusterIP there (hex 0A60 -> 0A61).
    const procIpVs = fixture('proc-ip-vs/nodeport.txt').replace('0A602D70', '0A612D70');
    const doubles = setup(
      'ipvs',
      cluster('ipvs', [{ tool: 'docker', match: '^exec dplab-ipvs-worker cat /proc/net/ip_vs$', stdout: procIpVs }], '10.97.45.112'),
    );
    const r = await explainLive('ipvs', 'default/web');
    expect(r.format).toBe('proc-ip-vs');
    expect(r.frontends.map((f) => `${f.type} ${f.ip}:${f.port}`)).toEqual(['ClusterIP 10.97.45.112:80', 'NodePort 172.18.0.3:30080']);
    expect(shares(r)).toEqual([0.333, 0.333, 0.333]);
    expect(doubles.commandLines()).toContain('docker exec dplab-ipvs-worker cat /proc/net/ip_vs');
  });

  it('cilium: asks the agent pod on the chosen node', async () => {
    const doubles = setup(
      'cilium',
      cluster('cilium', [
        {
          tool: 'kubectl',
          match: ' -n kube-system get pods -l k8s-app=cilium --field-selector spec\\.nodeName=dplab-cilium-worker -o json$',
          stdout: JSON.stringify({ items: [{ metadata: { name: 'cilium-x7k2p' } }] }),
        },
        {
          tool: 'kubectl',
          match: ' -n kube-system exec cilium-x7k2p -c cilium-agent -- cilium-dbg service list -o json$',
          stdout: fixture('cilium-json/clusterip.json'),
        },
      ]),
    );
    const r = await explainLive('cilium', 'default/web');
    expect(r).toMatchObject({ format: 'cilium-json', node: 'dplab-cilium-worker' });
    expect(shares(r)).toEqual([0.333, 0.333, 0.333]);
    expect(doubles.commandLines().some((l) => l.endsWith('exec cilium-x7k2p -c cilium-agent -- cilium-dbg service list -o json'))).toBe(
      true,
    );
  });

  it('cilium: no agent on the node is a 409 with a fix', async () => {
    setup('cilium', cluster('cilium', [{ tool: 'kubectl', match: ' get pods -l k8s-app=cilium ', stdout: '{"items":[]}' }]));
    const err = await rejection(readDataplane('cilium'));
    expect(err.status).toBe(409);
    expect(err.message).toBe('No cilium agent pod runs on dplab-cilium-worker.');
  });

  it('says why a Service has no entry: missing, headless, or not synced yet', async () => {
    setup('iptables', cluster('iptables', [{ tool: 'docker', match: 'iptables-save$', stdout: fixture('iptables-save/clusterip.txt') }]));
    const missing = await rejection(explainLive('iptables', 'default/nope'));
    expect([missing.status, missing.message]).toEqual([404, 'Service default/nope does not exist in the iptables cluster.']);
    expect(missing.fix).toBe('Services in default: default/web, default/web-headless, default/lonely.');
    const headless = await rejection(explainLive('iptables', 'default/web-headless'));
    expect(headless.message).toMatch(/is headless \(clusterIP: None\)/);
    const lonely = await rejection(explainLive('iptables', 'default/lonely'));
    expect(lonely.message).toBe('Service default/lonely has no iptables-save entries on dplab-iptables-worker yet.');
    expect(lonely.details).toMatch(/default\/web/);
  });

  it('output the parser does not understand is a 502 naming the command, not a crash', async () => {
    setup(
      'nftables',
      cluster('nftables', [{ tool: 'docker', match: 'nft -j list table ip kube-proxy$', stdout: '{"nftables": [{"rule": 42' }]),
    );
    const err = await rejection(readDataplane('nftables'));
    expect(err.status).toBe(502);
    expect(err.message).toBe('The nft-json output of dplab-nftables-worker is not what the parser expects.');
    expect(err.fix).toContain('nft -j list table ip kube-proxy');
  });
});

describe('a cluster that is not there', () => {
  it('no kubeconfig: 409 with `dplab up`, and nothing is run', async () => {
    const doubles = setup('nftables', cluster('nftables'), { kubeconfig: false });
    const err = await rejection(explainLive('nftables', 'default/web'));
    expect(err.status).toBe(409);
    expect(err.message).toBe('The nftables cluster is not running (there is no dplab-nftables cluster yet).');
    expect(err.fix).toMatch(/dplab up nftables/);
    expect(doubles.calls()).toEqual([]);
  });

  it('Docker daemon down: 503 saying so', async () => {
    setup('iptables', [{ tool: 'kind', match: '^get nodes ', stderr: `ERROR: failed to list nodes: ${DAEMON_DOWN_STDERR}`, exit: 1 }]);
    const err = await rejection(readDataplane('iptables'));
    expect(err.status).toBe(503);
    expect(err.message).toBe('Docker is not running, so the iptables cluster cannot be reached.');
  });

  it('kind missing: 503 naming the tool and the install hint', async () => {
    setup('ipvs', [], { without: ['kind'] });
    const err = await rejection(readDataplane('ipvs'));
    expect(err.status).toBe(503);
    expect(err.message).toBe('Cannot read the ipvs cluster: `kind` was not found on PATH.');
    expect(err.fix).toMatch(/Install kind/);
  });

  it('API server down: 503 with the fix', async () => {
    setup('iptables', [
      { tool: 'kind', match: '^get nodes ', stdout: 'dplab-iptables-control-plane\ndplab-iptables-worker\n' },
      { tool: 'docker', match: 'iptables-save$', stdout: fixture('iptables-save/clusterip.txt') },
      {
        tool: 'kubectl',
        stderr: 'The connection to the server 127.0.0.1:40123 was refused - did you specify the right host or port?\n',
        exit: 1,
      },
    ]);
    const err = await rejection(readDataplane('iptables'));
    expect(err.status).toBe(503);
    expect(err.message).toBe('The iptables cluster is not reachable: its API server did not answer.');
  });
});

describe('serviceNames', () => {
  it('maps ClusterIPs, external and load-balancer IPs, and NodePorts on node addresses, with port names', () => {
    const names = serviceNames(
      [
        svc('kube-system', 'kube-dns', '10.96.0.10', [{ name: 'dns', port: 53, protocol: 'UDP' }]),
        svc('default', 'web', '10.96.45.112', [{ port: 80, nodePort: 30080 }], { externalIPs: ['192.0.2.9'] }),
        {
          ...svc('default', 'lb', '10.96.9.9', [{ name: 'http', port: 80, protocol: 'TCP' }]),
          status: { loadBalancer: { ingress: [{ ip: '198.51.100.4' }, { hostname: 'x' }] } },
        },
        svc('default', 'headless', 'None', [{ port: 80 }]),
      ],
      [{ status: { addresses: [{ type: 'InternalIP', address: '172.18.0.3' }] } }],
    );
    expect(names).toEqual({
      'UDP/10.96.0.10:53': 'kube-system/kube-dns:dns',
      'TCP/10.96.45.112:80': 'default/web',
      'TCP/192.0.2.9:80': 'default/web',
      'TCP/0.0.0.0:30080': 'default/web',
      'TCP/172.18.0.3:30080': 'default/web',
      'TCP/10.96.9.9:80': 'default/lb:http',
      'TCP/198.51.100.4:80': 'default/lb:http',
    });
  });

  it('defaultNode is the first worker, else the only node', () => {
    expect(defaultNode(['k-control-plane', 'k-worker', 'k-worker2'])).toBe('k-worker');
    expect(defaultNode(['k-control-plane'])).toBe('k-control-plane');
  });
});

describe('dplab explain <mode> <ns/name>', () => {
  it('--json prints the same view as the file form', async () => {
    setup(
      'iptables',
      cluster('iptables', [
        { tool: 'docker', match: '^exec dplab-iptables-worker2 iptables-save$', stdout: fixture('iptables-save/clusterip.txt') },
      ]),
    );
    const out: string[] = [];
    const stdout = { write: (s: string) => out.push(s) };
    expect(await explain.run(['iptables', 'default/web', '--node', 'dplab-iptables-worker2', '--json'], commandContext({ stdout }))).toBe(
      0,
    );
    const json = JSON.parse(out.join(''));
    expect(Object.keys(json)).toEqual(['service', 'frontends']);
    expect(json.frontends[0].backends).toHaveLength(3);
  });

  it('without a cluster it throws the friendly error (the CLI prints it, exit 2)', async () => {
    setup('ipvs', [], { kubeconfig: false });
    const err = await rejection(explain.run(['ipvs', 'default/web'], commandContext()));
    expect(err.message).toMatch(/The ipvs cluster is not running/);
    await expect(explain.run(['ipvs', 'web'], commandContext())).rejects.toThrow(/is not a Service/);
    await expect(explain.run(['ipvs', 'default/web', '--format', 'cilium'], commandContext())).rejects.toThrow(
      /--format belongs to the --input form/,
    );
  });
});
