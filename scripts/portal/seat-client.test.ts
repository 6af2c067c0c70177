/**
 * SeatClient over its default transport (node:http) against a loopback server that records
 * every request and answers as the test says: the headers on the wire, timeouts, the answer
 * cap, the runner's refusals, and both ways of deleting a seat's clusters.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { clusterStatus } from '../../test/fixtures/cluster-status.ts';
import { MODES, type Mode } from '../wire/modes.ts';
import { httpTransport, SeatClient } from './seat-client.ts';

/** The seat's name as the runner knows it; the socket goes to loopback. */
const endpoint = { url: 'http://dplab-seat-a1.class-7.svc:4321', host: 'dplab-seat-a1.class-7.svc:4321' };

type Seen = { method?: string; url?: string; headers: IncomingHttpHeaders; body: string };
const closers: (() => void)[] = [];
afterEach(() => closers.splice(0).forEach((c) => c()));

async function runner(answer: (req: IncomingMessage, res: ServerResponse) => void) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      answer(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    seen,
    client: (token = 'tok') =>
      new SeatClient(
        endpoint,
        token,
        httpTransport(() => ({ hostname: '127.0.0.1', port })),
      ),
  };
}

const json = (res: ServerResponse, status: number, body: unknown) =>
  void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
describe('SeatClient', () => {
  it('sends the seat’s own Host, the matching Origin on writes and the bearer token, whatever address it connects to', async () => {
    const { seen, client } = await runner((req, res) =>
      req.url === '/api/health'
        ? json(res, 200, { ok: true, name: 'dataplane-lab' })
        : json(res, 202, { mode: 'ipvs', state: 'provisioning', events: '/api/clusters/events' }),
    );
    expect(await client().healthy()).toBe(true);
    await client().clusterUp('ipvs');
    expect(seen[0].headers.host).toBe(endpoint.host);
    // The open route gets neither the token nor an Origin.
    expect(seen[0].headers.authorization).toBeUndefined();
    expect(seen[0].headers.origin).toBeUndefined();
    expect(seen[1]).toMatchObject({ method: 'POST', url: '/api/clusters/ipvs/up', body: '{}' });
    expect(seen[1].headers).toMatchObject({
      host: endpoint.host,
      origin: `http://${endpoint.host}`,
      authorization: 'Bearer tok',
      'content-type': 'application/json',
    });
  });

  it('gives up on a runner that never answers, and healthy() says false', async () => {
    const { client } = await runner(() => undefined);
    await expect(client().call('GET', '/api/activity', {} as never, undefined, { timeoutMs: 200 })).rejects.toThrow(
      /did not answer GET \/api\/activity within 200 ms/,
    );
    expect(await client().healthy({ timeoutMs: 200 })).toBe(false);
  });

  it('refuses an answer over 4 MiB, one that is not JSON, one in the wrong shape, and passes on the runner’s own refusal', async () => {
    const { client } = await runner((req, res) => {
      if (req.url === '/api/activity') return void res.writeHead(200).end('x'.repeat(5 * 1024 * 1024));
      if (req.url === '/api/clusters') return void res.writeHead(502).end('<html>bad gateway</html>');
      if (req.url === '/api/clusters/ipvs') return json(res, 200, { mode: 'ipvs' });
      json(res, 409, { error: { message: 'Docker is not running.' } });
    });
    await expect(client().activity()).rejects.toThrow(/more than 4 MiB/);
    await expect(client().clusters()).rejects.toThrow(/other than JSON \(HTTP 502\)/);
    await expect(client().cluster('ipvs')).rejects.toThrow(/unexpected shape: name: Expected string; state: Expected "absent" or /);
    await expect(client().clusterUp('nftables')).rejects.toThrow(
      "The seat's runner refused POST /api/clusters/nftables/up: Docker is not running.",
    );
    expect(await client().healthy()).toBe(false);
  });

  it('deleteClusters deletes what the runner lists as there, and throws at the first it cannot delete', async () => {
    let refuse = false;
    const { seen, client } = await runner((req, res) => {
      if (req.method === 'GET')
        return json(res, 200, { clusters: MODES.map((m) => clusterStatus(m, m === 'ipvs' || m === 'cilium' ? 'ready' : 'absent')) });
      if (refuse) return json(res, 500, { error: { message: 'kind delete failed' } });
      json(res, 200, clusterStatus(req.url!.split('/')[3] as Mode));
    });
    expect(await client().deleteClusters()).toEqual(['ipvs', 'cilium']);
    expect(seen.filter((s) => s.method === 'DELETE').map((s) => s.url)).toEqual(['/api/clusters/ipvs', '/api/clusters/cilium']);
    refuse = true;
    seen.length = 0;
    await expect(client().deleteClusters()).rejects.toThrow(/kind delete failed/);
    expect(seen.filter((s) => s.method === 'DELETE')).toHaveLength(1);
  });

  it('deleteClustersBestEffort asks for every mode, collects what failed, and keeps one deadline for all', async () => {
    const { seen, client } = await runner((req, res) => {
      if (req.url === '/api/clusters/ipvs') return json(res, 500, { error: { message: 'kind delete failed' } });
      json(res, 200, clusterStatus(req.url!.split('/')[3] as Mode));
    });
    expect(await client().deleteClustersBestEffort()).toEqual([
      "ipvs: The seat's runner refused DELETE /api/clusters/ipvs: kind delete failed",
    ]);
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(MODES.map((m) => `DELETE /api/clusters/${m}`));

    // A runner that never answers: one deadline for the lot, not one per mode.
    const silent = await runner(() => undefined);
    const t0 = Date.now();
    const problems = await silent.client().deleteClustersBestEffort({ withinMs: 300 });
    expect(Date.now() - t0).toBeLessThan(1_500);
    expect(problems).toHaveLength(1);
    expect(silent.seen).toHaveLength(1);
  });

  it('deleteClustersBestEffort stops when its caller aborts', async () => {
    const { seen, client } = await runner(() => undefined);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const problems = await client().deleteClustersBestEffort({ signal: ac.signal });
    expect(problems).toEqual([expect.stringMatching(/^iptables: .*abort/i)]);
    expect(seen).toHaveLength(1);
  });
});

describe('SeatClient.watchActivity', () => {
  const activity = { progress: { version: 1, labs: {} }, checks: [] };
  const stream = (write: (res: ServerResponse) => void) => (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    write(res);
  };

  it('hands on each event, split anywhere on the wire, and skips heartbeats', async () => {
    const { seen, client } = await runner(
      stream((res) => {
        const text = `: heartbeat\n\nevent: activity\ndata: ${JSON.stringify(activity)}\n\nevent: cluster\ndata: {"mode":"ipvs","state":"ready"}\n\n`;
        // One byte at a time: the parser must not care where the pieces break.
        let i = 0;
        const next = () => (i < text.length ? res.write(text[i++], () => setImmediate(next)) : res.end());
        next();
      }),
    );
    const got: unknown[] = [];
    await client().watchActivity({ activity: (a) => got.push(['activity', a]), cluster: (c) => got.push(['cluster', c]) });
    expect(got).toEqual([
      ['activity', activity],
      ['cluster', { mode: 'ipvs', state: 'ready' }],
    ]);
    expect(seen[0].url).toBe('/api/activity/events');
    expect(seen[0].headers.authorization).toBe('Bearer tok');
  });

  it('stops at an event that is not the runner’s, naming what was wrong', async () => {
    const { client } = await runner(stream((res) => res.write('event: cluster\ndata: {"mode":"nope","state":"ready"}\n\n')));
    const got: unknown[] = [];
    await expect(client().watchActivity({ activity: (a) => got.push(a), cluster: (c) => got.push(c) })).rejects.toThrow(
      /"cluster" event in an unexpected shape/,
    );
    expect(got).toEqual([]);
  });

  it('stops at an endless event and at a runner that falls silent', async () => {
    const { client } = await runner(
      stream((res) => {
        const mib = 'x'.repeat(1024 * 1024);
        res.write('event: activity\ndata: ');
        for (let i = 0; i < 5; i++) res.write(mib);
      }),
    );
    await expect(client().watchActivity({ activity: () => undefined, cluster: () => undefined })).rejects.toThrow(/larger than 4 MiB/);
    const quiet = await runner(stream(() => undefined));
    await expect(quiet.client().watchActivity({ activity: () => undefined, cluster: () => undefined }, { silentMs: 300 })).rejects.toThrow(
      /did not answer GET \/api\/activity\/events within 300 ms/,
    );
  });

  it('is refused with the runner’s status, and ends when the runner ends it', async () => {
    const { client } = await runner((_req, res) => json(res, 401, { error: { message: 'no' } }));
    await expect(client().watchActivity({ activity: () => undefined, cluster: () => undefined })).rejects.toThrow(/HTTP 401/);
    const ended = await runner(stream((res) => res.end()));
    await expect(ended.client().watchActivity({ activity: () => undefined, cluster: () => undefined })).resolves.toBeUndefined();
  });
});
