/**
 * The connection cap makes room instead of refusing (issue 25): which socket is shed, on a bare
 * HTTP server, then the flood of the issue against a real runner: 200 connections trickling
 * headers and 100 silent ones must not keep the learner's health check or shell out, nor cut a
 * shell that was already open.
 */
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { capConnections, type ConnectionCap } from './core/connection-shedding.ts';
import { startServer, type RunningServer } from './http.ts';
import { HTTP_LIMITS } from './core/http-server.ts';
import { http, mustOpen, openShell, type Shell } from '../../test/fixtures/terminal-client.ts';

interface Raw {
  socket: Socket;
  /** Resolves when the server has closed (or reset) this connection. */
  closed: Promise<void>;
  isClosed(): boolean;
}

function raw(port: number): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let done = false;
    const closed = new Promise<void>((r) =>
      socket.on('close', () => {
        done = true;
        r();
      }),
    );
    socket.on('error', () => undefined);
    socket.once('error', reject);
    socket.once('connect', () => resolve({ socket, closed, isClosed: () => done }));
    socket.resume();
  });
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether the server closes `c` within `ms` (a bounded wait, so a regression fails fast). */
async function closedWithin(c: Raw, ms = 1000): Promise<boolean> {
  await Promise.race([c.closed, tick(ms)]);
  return c.isClosed();
}

/** Until the server has seen `n` sockets (a client's connect comes before the server's accept). */
async function untilOpen(cap: ConnectionCap, n: number): Promise<void> {
  const deadline = Date.now() + 2000;
  while (cap.open < n && Date.now() < deadline) await tick(5);
}

describe('which socket is shed', () => {
  let server: Server;
  let port: number;
  let cap: ConnectionCap;
  const clients: Socket[] = [];
  beforeAll(async () => {
    // Requests are held open until the client goes; upgrades are taken and kept, and read, so
    // that the client's going is seen.
    server = createServer(() => undefined);
    server.on('upgrade', (_req, socket) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n');
      socket.on('end', () => socket.destroy());
      socket.on('error', () => undefined);
      socket.resume();
    });
    cap = capConnections(server, 4);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const a = server.address();
    port = typeof a === 'object' && a ? a.port : 0;
  });
  afterEach(async () => {
    clients.splice(0).forEach((c) => c.destroy());
    const deadline = Date.now() + 2000;
    while (cap.open > 0 && Date.now() < deadline) await tick(5);
    expect(cap.open).toBe(0);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const open = async () => {
    const r = await raw(port);
    clients.push(r.socket);
    return r;
  };

  it('the quietest idle or half-sent socket goes, never a request in flight or an upgrade', async () => {
    const inFlight = await open();
    inFlight.socket.write('POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n');
    const upgraded = await open();
    upgraded.socket.write('GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n');
    const halfSent = await open();
    halfSent.socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
    const silent = await open();
    await untilOpen(cap, 4);
    await tick(50);

    // Over the cap: the silent one (0 bytes) makes room, not the newcomer.
    const first = await open();
    expect(await closedWithin(silent)).toBe(true);
    await tick(50);
    expect(first.isClosed()).toBe(false);
    // Next, the newcomer of before, which has sent nothing either, rather than the half-sent one.
    const second = await open();
    expect(await closedWithin(first)).toBe(true);
    await tick(50);
    expect([halfSent, second].map((c) => c.isClosed())).toEqual([false, false]);
    // Then the half-sent one, which has sent less than the newcomer that has started its headers.
    second.socket.write('GET / HTTP/1.1\r\nHost: x\r\nX-Long: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n');
    await tick(50);
    const third = await open();
    expect(await closedWithin(halfSent)).toBe(true);
    await tick(50);
    expect([inFlight, upgraded, second, third].map((c) => c.isClosed())).toEqual([false, false, false, false]);
    expect(cap).toMatchObject({ open: 4, shed: 3, refused: 0 });
  });

  it('when every socket is busy, the newcomer is refused', async () => {
    const busy = [];
    for (let i = 0; i < 4; i++) {
      const c = await open();
      c.socket.write(
        i % 2 ? 'GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n' : 'GET /held HTTP/1.1\r\nHost: x\r\n\r\n',
      );
      busy.push(c);
    }
    await untilOpen(cap, 4);
    await tick(50);
    const refusedBefore = cap.refused;
    const extra = await open();
    expect(await closedWithin(extra)).toBe(true);
    await tick(50);
    expect(busy.map((c) => c.isClosed())).toEqual([false, false, false, false]);
    expect(cap.refused).toBe(refusedBefore + 1);
  });
});

describe('a flood of 200 trickling and 100 silent connections (issue 25)', () => {
  const TOKEN = 'shedding-token-0123456789abcdef';
  let server: RunningServer;
  let origin: string;
  const flood: Raw[] = [];
  const trickles: NodeJS.Timeout[] = [];
  const headers = () => ({ origin, host: `127.0.0.1:${server.port}`, authorization: `Bearer ${TOKEN}` });

  beforeAll(async () => {
    process.env.DPLAB_STATE_DIR = mkdtempSync(join(tmpdir(), 'dplab-state-'));
    const site = mkdtempSync(join(tmpdir(), 'dplab-site-'));
    writeFileSync(join(site, 'index.html'), '<h1>course</h1>');
    // The shipped limits: the 256 cap and the 10 s header timeout.
    server = await startServer({ port: 0, portExplicit: true, token: TOKEN, siteDir: site });
    origin = `http://127.0.0.1:${server.port}`;
  });
  const endFlood = () => {
    trickles.splice(0).forEach(clearInterval);
    flood.splice(0).forEach((c) => c.socket.destroy());
  };
  afterAll(async () => {
    endFlood();
    await server.close();
  });

  async function startFlood(): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const c = await raw(server.port);
      c.socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n`);
      trickles.push(setInterval(() => c.socket.writable && c.socket.write('X-Slow: a\r\n'), 200));
      flood.push(c);
    }
    for (let i = 0; i < 100; i++) flood.push(await raw(server.port));
    // Let the server take them all in and the trickles run.
    await tick(500);
  }

  it('health answers at once, a new shell opens, and the shell already open lives on', async () => {
    expect(HTTP_LIMITS.maxConnections).toBe(256);
    const before: Shell = mustOpen(await openShell(server.port, headers()));
    await before.waitFor('"type":"ready"');
    let beforeClosed = false;
    before.ws.on('close', () => (beforeClosed = true));

    await startFlood();

    const t0 = performance.now();
    const health = await http(origin, '/api/health', { timeoutMs: 5000 }).then(
      (r) => r.status,
      (err: Error) => err.message,
    );
    const healthMs = performance.now() - t0;
    console.log(`health under the flood: ${health} in ${healthMs.toFixed(1)} ms`);
    expect(health).toBe(200);
    expect(healthMs).toBeLessThan(1000);

    const t1 = performance.now();
    const shell = mustOpen(await openShell(server.port, headers()));
    await shell.waitFor('"type":"ready"');
    console.log(`a new shell under the flood: ready in ${(performance.now() - t1).toFixed(1)} ms`);
    shell.type('echo FRESH-$((6*7))\r');
    await shell.waitFor('FRESH-42');
    shell.close();

    // Another wave over the cap sheds more quiet sockets, never the open shell.
    for (let i = 0; i < 100; i++) flood.push(await raw(server.port));
    await tick(300);
    before.type('echo STILL-$((2+3))\r');
    await before.waitFor('STILL-5');
    expect(beforeClosed).toBe(false);
    before.close();
  });

  it('a live shell and a request in flight are never shed, even when they have sent least', async () => {
    endFlood();
    await tick(200);
    const shell: Shell = mustOpen(await openShell(server.port, headers()));
    await shell.waitFor('"type":"ready"');
    let shellClosed = false;
    shell.ws.on('close', () => (shellClosed = true));
    // Headers complete, the body still to come.
    const posting = await raw(server.port);
    let answer = '';
    posting.socket.on('data', (d: Buffer) => (answer += d.toString()));
    const body = '{"terminal":null}';
    posting.socket.write(
      `POST /api/terminal/broadcast HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nOrigin: ${origin}\r\n` +
        `Authorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 11)}`,
    );
    // More sockets than the cap holds, each with 2 KB of headers sent: more than the shell's
    // handshake or the POST, so those two are the quietest. Over the cap they come one at a
    // time, so each newcomer's headers are in before the next arrives (else the newcomer of
    // before, at 0 bytes, would be the one shed every time).
    const pad = `X-Pad: ${'a'.repeat(2000)}\r\n`;
    for (let i = 0; i < HTTP_LIMITS.maxConnections + 50; i++) {
      const c = await raw(server.port);
      c.socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n${pad}`);
      flood.push(c);
      if (i >= HTTP_LIMITS.maxConnections - 3) await tick(20);
    }
    await tick(300);
    expect(flood.filter((c) => c.isClosed()).length).toBeGreaterThanOrEqual(50);
    expect(posting.isClosed()).toBe(false);
    posting.socket.write(body.slice(11));
    const deadline = Date.now() + 2000;
    while (!answer.includes('\r\n\r\n') && Date.now() < deadline) await tick(10);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    shell.type('echo KEPT-$((4*4))\r');
    await shell.waitFor('KEPT-16');
    expect(shellClosed).toBe(false);
    shell.close();
    posting.socket.destroy();
  });
});
