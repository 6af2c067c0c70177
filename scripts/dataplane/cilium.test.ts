// Cilium shapes the scenario grid lacks. Text is laid out as cilium-dbg/cmd/service_list.go prints
// it (tabwriter minwidth 5, padding 3; "Frontend\tService Type\tBackend\t"; "%d => %s (%s)"), types
// are pkg/loadbalancer's SVCType values, and the two-scope (/i) frontends and 0.0.0.0 NodePorts follow
// Cilium 1.18's load-balancer tests (pkg/loadbalancer/tests/testdata/nodeport.txtar, trafficpolicy.txtar).
import { describe, expect, it } from 'vitest';
import { findFrontend, parse } from './index.ts';

const HEADER = 'Frontend                 Service Type    Backend';
const text = (...rows: string[]) => `${[HEADER, ...rows].join('\n')}\n`;

describe('cilium-dbg service list (text)', () => {
  it('models LocalRedirect and HostPort rows instead of dropping them', () => {
    const model = parse(
      'cilium',
      text(
        '0.0.0.0:8080/TCP         HostPort        1 => 10.244.1.7:80/TCP (active)',
        '10.96.0.10:53/UDP        LocalRedirect   1 => 10.244.1.9:53/UDP (active)',
        '10.96.0.10:53/TCP        ClusterIP       1 => 10.244.0.2:53/TCP (active)',
      ),
    );
    const types = model.services.flatMap((s) => s.frontends.map((f) => `${f.type} ${f.ip}:${f.port}/${f.protocol}`));
    expect(types).toEqual(
      expect.arrayContaining(['HostPort 0.0.0.0:8080/TCP', 'LocalRedirect 10.96.0.10:53/UDP', 'ClusterIP 10.96.0.10:53/TCP']),
    );
    expect(model.notes).toBeUndefined();
  });

  it('a type it does not know is left out with a note naming it and its line, and the rest is read', () => {
    const model = parse(
      'cilium',
      text(
        '10.96.0.1:443/TCP        ClusterIP       1 => 172.18.0.2:6443/TCP (active)',
        '10.96.7.7:80/TCP         NONE            1 => 10.244.1.2:80/TCP (active)',
        '10.96.45.112:80/TCP      ClusterIP       1 => 10.244.1.2:8080/TCP (active)',
      ),
    );
    expect(model.services.flatMap((s) => s.frontends.map((f) => f.ip))).toEqual(expect.arrayContaining(['10.96.0.1', '10.96.45.112']));
    expect(model.services.flatMap((s) => s.frontends.map((f) => f.ip))).not.toContain('10.96.7.7');
    expect(model.notes).toEqual(['line 3: service type "NONE" is not one this parser knows; that frontend is left out']);
  });

  it('externalTrafficPolicy Local: the external NodePort has the local subset, its /i twin all; only the external one is local', () => {
    const model = parse(
      'cilium',
      text(
        '0.0.0.0:30080/TCP        NodePort        1 => 10.244.1.2:8080/TCP (active)',
        '0.0.0.0:30080/TCP/i      NodePort        1 => 10.244.1.2:8080/TCP (active)',
        '                                         2 => 10.244.2.2:8080/TCP (active)',
      ),
    );
    const np = findFrontend(model, '172.18.0.3:30080')?.frontends;
    expect(np).toHaveLength(1);
    expect(np?.[0]).toMatchObject({ ip: '0.0.0.0', localOnly: true, dropsWithoutLocalEndpoints: false });
  });

  it('internalTrafficPolicy Local, externalTrafficPolicy Cluster: the twin is the local side, the external NodePort is not local', () => {
    const model = parse(
      'cilium',
      text(
        '0.0.0.0:30080/TCP        NodePort        1 => 10.244.1.2:8080/TCP (active)',
        '                                         2 => 10.244.2.2:8080/TCP (active)',
        '0.0.0.0:30080/TCP/i      NodePort        1 => 10.244.1.2:8080/TCP (active)',
      ),
    );
    expect(findFrontend(model, '0.0.0.0:30080')?.frontends[0]).toMatchObject({
      localOnly: false,
      backends: [{ ip: '10.244.1.2' }, { ip: '10.244.2.2' }],
    });
  });
});

describe('cilium-dbg service list -o json', () => {
  const svc = (ip: string, port: number, type: string, flags: Record<string, string>, backends: string[], scope = 'external') => {
    const spec = {
      'backend-addresses': backends.map((b) => ({ ip: b, port: 8080, protocol: 'TCP', state: 'active' })),
      flags: { name: 'web', namespace: 'default', type, ...flags },
      'frontend-address': { ip, port, protocol: 'TCP', scope },
    };
    return { spec, status: { realized: spec } };
  };

  it('internalTrafficPolicy: Local makes the ClusterIP local (it was forced to false)', () => {
    const json = JSON.stringify([
      svc('10.96.45.112', 80, 'ClusterIP', { extTrafficPolicy: 'Cluster', intTrafficPolicy: 'Local' }, ['10.244.1.2']),
    ]);
    expect(findFrontend(parse('cilium-json', json), '10.96.45.112:80')?.frontends[0].localOnly).toBe(true);
  });

  it('ETP Cluster + ITP Local on a NodePort: the external frontend follows extTrafficPolicy, its internal twin is folded in', () => {
    const json = JSON.stringify([
      svc('0.0.0.0', 30080, 'NodePort', { extTrafficPolicy: 'Cluster', intTrafficPolicy: 'Local' }, ['10.244.1.2', '10.244.2.2']),
      svc('0.0.0.0', 30080, 'NodePort', { extTrafficPolicy: 'Cluster', intTrafficPolicy: 'Local' }, ['10.244.1.2'], 'internal'),
      svc('10.96.45.112', 80, 'ClusterIP', { extTrafficPolicy: 'Cluster', intTrafficPolicy: 'Local' }, ['10.244.1.2']),
    ]);
    const view = findFrontend(parse('cilium-json', json), '172.18.0.4:30080');
    expect(view?.service).toBe('default/web');
    expect(view?.frontends).toHaveLength(1);
    expect(view?.frontends[0]).toMatchObject({ type: 'NodePort', ip: '0.0.0.0', localOnly: false });
    expect(view?.frontends[0].backends).toHaveLength(2);
  });
});
