// Every fixture in every format must give the same, exactly stated, picture of `web`.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findFrontend, FORMATS, findService, parse, toJson, type Format, type FrontendType, type JsonView } from './index.ts';
import { SCENARIOS, type ScenarioId } from './synth/scenarios.ts';
import { fixtureFile } from './fixture-catalog.ts';

const NODE = { worker: '172.18.0.3', controlPlane: '172.18.0.2' };
/** What a learner would pass for tools that do not name Services. */
const NAMES = {
  '10.96.45.112:80': 'default/web',
  '172.18.0.3:30080': 'default/web',
  '172.18.0.2:30080': 'default/web',
  '10.96.118.20:80': 'default/web-idle',
  '172.18.0.3:30081': 'default/web-idle',
};
const THIRD = 1 / 3;
const ALL3 = [
  ['10.244.1.2', THIRD],
  ['10.244.1.3', THIRD],
  ['10.244.2.2', THIRD],
] as const;
const LOCAL2 = [
  ['10.244.1.2', 0.5],
  ['10.244.1.3', 0.5],
] as const;

export function load(format: Format, id: string) {
  return parse(format, readFileSync(fixtureFile(format, id), 'utf8'), { names: NAMES });
}

function fe(
  type: FrontendType,
  ip: string,
  port: number,
  backends: ReadonlyArray<readonly [string, number]>,
  extra: Partial<JsonView['frontends'][number]> = {},
) {
  return {
    type,
    ip,
    port,
    protocol: 'TCP',
    backends: backends.map(([bip, share]) => ({ ip: bip, port: 8080, share })),
    localOnly: false,
    dropsWithoutLocalEndpoints: false,
    affinity: null,
    ...extra,
  };
}

/** NodePort frontends as each tool shows them: one on 0.0.0.0 (rules, Cilium 1.18) or per node IP (IPVS). */
function nodePortIps(format: Format, id: ScenarioId): string[] {
  const nodeIp = id === 'etp-local-without-endpoints' ? NODE.controlPlane : NODE.worker;
  if (format === 'ipvsadm' || format === 'proc-ip-vs') return [nodeIp];
  return ['0.0.0.0'];
}

function expectedWeb(format: Format, id: ScenarioId): JsonView {
  const ciliumNoAffinity = format === 'cilium' || format === 'cilium-json';
  const affinity = id === 'affinity' && !ciliumNoAffinity ? { timeoutSeconds: 10800 } : null;
  const frontends = [fe('ClusterIP', '10.96.45.112', 80, ALL3, { affinity })];
  const np = (backends: ReadonlyArray<readonly [string, number]>, extra = {}) =>
    nodePortIps(format, id).map((ip) => fe('NodePort', ip, 30080, backends, extra));
  if (id === 'nodeport' || id === 'no-endpoints') frontends.push(...np(ALL3));
  if (id === 'etp-local-with-endpoints') frontends.push(...np(LOCAL2, { localOnly: true }));
  if (id === 'etp-local-without-endpoints') frontends.push(...np([], { localOnly: true, dropsWithoutLocalEndpoints: true }));
  return { service: 'default/web', frontends };
}

function rounded(v: JsonView | null) {
  return (
    v && {
      ...v,
      frontends: v.frontends.map((f) => ({ ...f, backends: f.backends.map((b) => ({ ...b, share: Number(b.share.toFixed(9)) })) })),
    }
  );
}

// Every format the parsers read has the whole scenario grid (the fixtures' README: a new format brings its fixtures).
describe.each([...FORMATS])('%s fixtures', (format) => {
  it.each([...SCENARIOS])('%s: web has the expected frontends, backends and shares', (id) => {
    const view = findService(load(format, id), 'default/web');
    expect(rounded(view ? toJson(view) : null)).toEqual(rounded(expectedWeb(format, id)));
  });

  it.each([...SCENARIOS])('%s: the headless Service is absent while web is present', (id) => {
    const model = load(format, id);
    expect(findService(model, 'default/web')).not.toBeNull();
    expect(findService(model, 'default/web-headless')).toBeNull();
  });

  it('no-endpoints: web-idle has frontends with zero backends', () => {
    const view = findService(load(format, 'no-endpoints'), 'default/web-idle');
    expect(view?.frontends.map((f) => [f.type, f.port, f.backends.length])).toEqual([
      ['ClusterIP', 80, 0],
      ...nodePortIps(format, 'no-endpoints').map(() => ['NodePort', 30081, 0]),
    ]);
    const rulesBased = format === 'iptables-save' || format === 'nft-json';
    for (const f of view?.frontends ?? []) {
      expect(f.dropsWithoutLocalEndpoints).toBe(false);
      expect(f.noBackendVerdict).toBe(rulesBased ? 'reject' : null);
    }
  });

  it('counts the entries it read', () => {
    const model = load(format, 'clusterip');
    expect(model.entries).toBeGreaterThan(0);
    expect(model.entriesLabel).not.toBe('');
  });
});

describe('format details', () => {
  it('iptables: ETP Local without local endpoints is a filter-table DROP', () => {
    const view = findService(load('iptables-save', 'etp-local-without-endpoints'), 'default/web');
    const np = view?.frontends.find((f) => f.type === 'NodePort');
    expect(np?.noBackendVerdict).toBe('drop');
    expect(np?.path).toContain('KUBE-EXTERNAL-SERVICES (filter)');
  });

  it('iptables: resolves chained probabilities and keeps the raw figures', () => {
    const view = findService(load('iptables-save', 'clusterip'), 'default/web');
    const details = view?.frontends[0].backends.map((b) => b.detail);
    expect(details).toEqual(['probability 0.33333333349', 'probability 0.50000000000', 'always (last rule)']);
  });

  it('iptables: named ports come from the comment', () => {
    const model = load('iptables-save', 'clusterip');
    expect(model.services.filter((s) => s.service === 'kube-system/kube-dns').map((s) => s.portName)).toEqual([
      'dns',
      'dns-tcp',
      'metrics',
    ]);
  });

  it('nft: ETP Local without local endpoints is a no-endpoint-nodeports drop', () => {
    const np = findService(load('nft-json', 'etp-local-without-endpoints'), 'default/web')?.frontends.find((f) => f.type === 'NodePort');
    expect(np?.noBackendVerdict).toBe('drop');
  });

  it('proc-ip-vs: persistence is in jiffies and converted with hz', () => {
    const text = readFileSync(fixtureFile('proc-ip-vs', 'affinity'), 'utf8');
    const at1000 = findFrontend(parse('proc-ip-vs', text, { hz: 1000 }), '10.96.45.112:80');
    expect(at1000?.frontends[0].affinity).toEqual({ timeoutSeconds: 2700 });
  });

  it('ipvs without names: services are null, frontends still found', () => {
    const model = parse('ipvsadm', readFileSync(fixtureFile('ipvsadm', 'clusterip'), 'utf8'));
    expect(model.services.every((s) => s.service === null)).toBe(true);
    expect(findFrontend(model, '10.96.45.112:80')?.frontends[0].backends).toHaveLength(3);
  });

  it('cilium text without the ID column (a paste cut to fit) reads the same as with it', () => {
    const withId = readFileSync(fixtureFile('cilium', 'clusterip'), 'utf8');
    const withoutId = withId.replace(/^(ID {3}|\d+ +| {5,})/gm, (m) => (m.startsWith('ID') || /^\d/.test(m) ? '' : m.slice(5)));
    expect(withoutId.split('\n')[0]).toMatch(/^Frontend /);
    const names = { '10.96.45.112:80': 'default/web' };
    expect(parse('cilium', withoutId, { names })).toEqual(parse('cilium', withId, { names }));
  });

  it('findFrontend matches a node address against a 0.0.0.0 NodePort', () => {
    const view = findFrontend(load('iptables-save', 'nodeport'), '172.18.0.3:30080');
    expect(view?.service).toBe('default/web');
    expect(view?.frontends[0].ip).toBe('0.0.0.0');
  });
});
