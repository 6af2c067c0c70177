import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installDoubles } from '../../test/fixtures/doubles.ts';
import { clusterHandle } from './providers.ts';
import { probeRoute, resetProbeRoute } from './probe.ts';
import { NODE_IMAGE } from './versions.ts';

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
