// The explorer API over HTTP: fixtures for everyone, live reads through an injected reader, and
// every id from the query either known or answered with a 4xx that names the known ones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DplabError } from '../../base/errors.ts';
import type { ExplainResponse } from '../../dataplane/explain-view.ts';
import type { Mode } from '../../catalogue/modes.ts';
import { matchRoute } from '../core/router.ts';
import { runnerServices } from '../../services/runner-services.ts';
import { apiRoutes } from './index.ts';
import type { ExplainLive } from './dataplane.ts';
import { serveRunner, type TestRunner } from '../../../test/fixtures/runner-http.ts';

const liveCalls: Array<{ mode: Mode; service: string; node?: string }> = [];
const fakeLive: ExplainLive = async (mode, service, opts) => {
  liveCalls.push({ mode, service, node: opts.node });
  if (mode === 'cilium')
    throw new DplabError('The cilium cluster is not running (there is no dplab-cilium cluster yet).', {
      fix: 'Start it with `dplab up cilium`.',
      status: 409,
    });
  return {
    service,
    format: 'iptables-save',
    source: 'live',
    mode,
    node: opts.node ?? 'dplab-iptables-worker',
    entries: 1,
    entriesLabel: 'rules',
    counts: {},
    frontends: [],
    mermaid: 'flowchart TB',
    text: '',
  } satisfies ExplainResponse;
};

let runner: TestRunner;

beforeAll(async () => {
  runner = await serveRunner({ explainLive: fakeLive });
});
afterAll(() => runner.close());

const get = (path: string) => runner.call('GET', path);

describe('GET /api/dataplane/fixtures', () => {
  it('lists every bundled fixture with a description, the node and its Services', async () => {
    const r = await get('/api/dataplane/fixtures');
    expect(r.status).toBe(200);
    const ids = r.json.fixtures.map((f: { id: string }) => f.id);
    expect(ids).toContain('iptables-save/clusterip');
    expect(ids).toContain('cilium/clusterip');
    expect(ids).toContain('iptables-save/upstream-v1.35-overall');
    expect(ids.length).toBe(42);
    const first = r.json.fixtures[0];
    expect(first).toMatchObject({ id: 'iptables-save/clusterip', format: 'iptables-save', name: 'clusterip', node: 'dplab-worker' });
    expect(first.description).toMatch(/ClusterIP/);
    expect(first.services).toEqual(['default/kubernetes', 'default/web', 'kube-system/kube-dns']);
  });
});

describe('GET /api/dataplane/fixture', () => {
  it.each(['iptables-save', 'nft-json', 'ipvsadm', 'proc-ip-vs', 'cilium', 'cilium-json'])(
    '%s/clusterip: web has three backends at a third each',
    async (format) => {
      const r = await get(`/api/dataplane/fixture?format=${format}&name=clusterip&service=default/web`);
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({
        service: 'default/web',
        format,
        source: 'fixture',
        fixture: `${format}/clusterip`,
        node: 'dplab-worker',
      });
      expect(r.json.entries).toBeGreaterThan(0);
      expect(r.json.frontends[0].backends.map((b: { share: number }) => b.share.toFixed(3))).toEqual(['0.333', '0.333', '0.333']);
      expect(r.json.mermaid).toMatch(/^flowchart TB/);
      expect(r.json.text).toContain('10.96.45.112:80/TCP');
    },
  );

  it('unknown fixture or format: 404 naming the known ones; nothing is read from the path', async () => {
    for (const q of ['format=iptables-save&name=..%2F..%2Fpackage', 'format=..&name=clusterip', 'format=iptables&name=clusterip']) {
      const r = await get(`/api/dataplane/fixture?${q}&service=default/web`);
      expect(r.status).toBe(404);
      expect(r.json.error.message).toMatch(/^Unknown fixture ".*"\. Known: iptables-save\/clusterip, /);
    }
  });

  it('unknown Service: 404 naming the Services in the fixture', async () => {
    const r = await get('/api/dataplane/fixture?format=nft-json&name=clusterip&service=default/web-headless');
    expect(r.status).toBe(404);
    expect(r.json.error.message).toBe(
      'Service default/web-headless is not in the fixture nft-json/clusterip. Known: default/kubernetes, default/web, kube-system/kube-dns.',
    );
  });

  it('missing or malformed query: 400', async () => {
    expect((await get('/api/dataplane/fixture?format=nft-json&service=default/web')).status).toBe(400);
    expect((await get('/api/dataplane/fixture?format=nft-json&name=clusterip')).status).toBe(400);
    const bad = await get('/api/dataplane/fixture?format=nft-json&name=clusterip&service=web');
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/give namespace\/name/);
  });
});

describe('GET /api/dataplane/:mode', () => {
  it('passes mode, Service and node to the live reader', async () => {
    const r = await get('/api/dataplane/iptables?service=lab-first-service/web&node=dplab-iptables-worker2');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ service: 'lab-first-service/web', mode: 'iptables', node: 'dplab-iptables-worker2' });
    expect(liveCalls.at(-1)).toEqual({ mode: 'iptables', service: 'lab-first-service/web', node: 'dplab-iptables-worker2' });
  });

  it('unknown mode: 404 naming the modes, before anything is read', async () => {
    const n = liveCalls.length;
    const r = await get('/api/dataplane/..%2Fetc?service=default/web');
    expect(r.status).toBe(404);
    expect(r.json.error.message).toBe('Unknown mode "../etc". Known: iptables, ipvs, nftables, cilium.');
    expect(liveCalls.length).toBe(n);
  });

  it('bad Service: 400; a cluster that is not running: its 409 with the fix', async () => {
    expect((await get('/api/dataplane/ipvs?service=Default/Web')).status).toBe(400);
    expect((await get('/api/dataplane/ipvs')).status).toBe(400);
    const r = await get('/api/dataplane/cilium?service=default/web');
    expect(r.status).toBe(409);
    expect(r.json.error).toEqual({
      message: 'The cilium cluster is not running (there is no dplab-cilium cluster yet).',
      fix: 'Start it with `dplab up cilium`.',
    });
  });
});

describe('wiring', () => {
  it('the server serves the dataplane routes', () => {
    const routes = apiRoutes(runnerServices({ explainLive: fakeLive }));
    expect(routes.some((r) => r.path === '/api/dataplane/:mode')).toBe(true);
    const found = matchRoute(routes, 'GET', '/api/dataplane/fixtures');
    expect(found && 'route' in found && found.route.path).toBe('/api/dataplane/fixtures');
  });
});

describe('GET /api/dataplane/fixture, upstream output', () => {
  it("kube-proxy v1.35.0's own LoadBalancer with Local policy: one LoadBalancer frontend, dropping on this node", async () => {
    const r = await get('/api/dataplane/fixture?format=iptables-save&name=upstream-v1.35-overall&service=ns2/svc2');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ service: 'ns2/svc2', fixture: 'iptables-save/upstream-v1.35-overall', node: 'test-node' });
    const lb = r.json.frontends.filter((f: { ip: string }) => f.ip === '1.2.3.4');
    expect(lb).toEqual([expect.objectContaining({ type: 'LoadBalancer', dropsWithoutLocalEndpoints: true })]);
  });
});
