import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installDoubles } from '../../test/fixtures/doubles.ts';
import { clusterHandle } from './providers.ts';
import { probeFromHost, probeRoute, resetProbeRoute } from './probe.ts';
import { NODE_IMAGE } from '../base/versions.ts';

let server: Server;
let port: number;

const inspect = { tool: 'docker' as const, match: '^inspect -f ', stdout: '127.0.0.1 \n' };

beforeEach(async () => {
  resetProbeRoute();
  server = createServer((req, res) => res.end(`hello from ${req.url}`));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterEach(async () => {
  await new Promise((r) => server.close(r));
});

describe('probeFromOutside', () => {
  it('on a native Linux engine probes from the host, no docker exec into a node', async () => {
    const d = installDoubles(
      {
        rules: [
          inspect,
          { tool: 'docker', match: '^info ', stdout: JSON.stringify({ OperatingSystem: 'Ubuntu 24.04', Name: 'h', ServerVersion: '28' }) },
        ],
      },
      {},
      { DPLAB_PROBE_FROM: '' },
    );
    expect(await probeRoute()).toBe(process.platform === 'linux' ? 'host' : 'helper');
    if (process.platform !== 'linux') return;
    const r = await clusterHandle('iptables').probeFromOutside('dplab-iptables-worker', port, '/x');
    expect(r).toMatchObject({ from: 'host', answered: true, status: 200, body: 'hello from /x', url: `http://127.0.0.1:${port}/x` });
    expect(d.commandLines().some((l) => l.startsWith('docker exec'))).toBe(false);
    // A closed port: no answer, not an error.
    const closed = await clusterHandle('iptables').probeFromOutside('dplab-iptables-worker', 1, '/');
    expect(closed).toMatchObject({ from: 'host', answered: false });
  });

  it('on Docker Desktop probes from a helper container on the kind network', async () => {
    const d = installDoubles(
      {
        rules: [
          inspect,
          {
            tool: 'docker',
            match: '^info ',
            stdout: JSON.stringify({ OperatingSystem: 'Docker Desktop', Name: 'docker-desktop', ServerVersion: '28' }),
          },
          {
            tool: 'docker',
            match: '^run --rm --network kind --entrypoint curl [\\s\\S]* http://127\\.0\\.0\\.1:30080/ok$',
            stdout: 'pod-a\n200',
          },
          {
            tool: 'docker',
            match: '^run --rm --network kind ',
            stderr: 'curl: (28) Connection timed out after 3001 milliseconds\n',
            exit: 28,
          },
        ],
      },
      {},
      { DPLAB_PROBE_FROM: '' },
    );
    expect(await probeRoute()).toBe('helper');
    const h = clusterHandle('cilium');
    expect(await h.probeFromOutside('dplab-cilium-worker', 30080, '/ok')).toMatchObject({
      from: 'helper-container',
      answered: true,
      status: 200,
      body: 'pod-a',
    });
    expect(await h.probeFromOutside('dplab-cilium-worker2', 30080, '/none')).toMatchObject({
      from: 'helper-container',
      answered: false,
      error: expect.stringMatching(/timed out/),
    });
    expect(d.commandLines()).toContain(
      `docker run --rm --network kind --entrypoint curl ${NODE_IMAGE} -sS --max-time 3 -w \n%{http_code} http://127.0.0.1:30080/ok`,
    );
  });

  it('DPLAB_PROBE_FROM forces the route', async () => {
    installDoubles({ rules: [] }, {}, { DPLAB_PROBE_FROM: 'helper' });
    expect(await probeRoute()).toBe('helper');
  });
});

describe('probeFromHost', () => {
  // Real kind showed why: a probe that reused the previous check's kept-alive connection saw the
  // client address that connection had before the Service's traffic policy changed.
  it('opens a new connection for every probe, as a fresh client would', async () => {
    const seen = new Server();
    const remotePorts: number[] = [];
    seen.on('request', (req, res) => {
      remotePorts.push(req.socket.remotePort ?? 0);
      res.end(`${req.socket.remoteAddress}:${req.socket.remotePort}`);
    });
    await new Promise<void>((r) => seen.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(seen.address() as AddressInfo).port}/clientip`;
    try {
      const [a, b, c] = [await probeFromHost(url), await probeFromHost(url), await probeFromHost(url)];
      expect([a, b, c].every((p) => p.answered && p.status === 200)).toBe(true);
      expect(new Set(remotePorts).size).toBe(3);
      expect(new Set([a.body, b.body, c.body]).size).toBe(3);
    } finally {
      seen.closeAllConnections();
      await new Promise((r) => seen.close(r));
    }
  });
});
