/**
 * Forwarding, over real sockets: a learner's request through forward.ts reaches a real runner
 * (which applies the whole security contract, so a wrong token, Host or Origin would be
 * refused there) with the seat's token and nothing of the learner's credentials.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../server/http.ts';
import { http, mustOpen, openShell } from '../../test/fixtures/terminal-client.ts';
import { forwardHttp, forwardUpgrade, seatRequestHeaders, seatSubprotocols } from './forward.ts';
import type { SeatEndpoint } from './seat-backend.ts';

const SEAT_TOKEN = 'seat-token-0123456789abcdef0123';
const LEARNER = 'learner-token-aaaaaaaaaaaaaaaaaaaa';

describe('the headers a seat gets', () => {
  const endpoint: SeatEndpoint = { url: 'http://127.0.0.1:5001', host: '127.0.0.1:5001' };
  it('swaps the token, Host and Origin, and drops cookies, forwarded-for and Referer', () => {
    const out = seatRequestHeaders(
      {
        host: 'portal.example:443',
        origin: 'https://portal.example',
        authorization: `Bearer ${LEARNER}`,
        cookie: 'session=1',
        referer: 'https://portal.example/labs/x/',
        'x-forwarded-for': '10.0.0.9',
        'content-type': 'application/json',
        accept: 'application/json',
      },
      endpoint,
      SEAT_TOKEN,
    );
    expect(out).toEqual({
      host: '127.0.0.1:5001',
      origin: 'http://127.0.0.1:5001',
      authorization: `Bearer ${SEAT_TOKEN}`,
      'content-type': 'application/json',
      accept: 'application/json',
    });
    expect(JSON.stringify(out)).not.toContain(LEARNER);
  });
  it('adds no Origin when the browser sent none (a GET)', () => {
    expect(seatRequestHeaders({ host: 'x' }, endpoint, SEAT_TOKEN).origin).toBeUndefined();
  });
  it('on an upgrade swaps the token subprotocol and keeps the others', () => {
    expect(seatSubprotocols(`dplab.v1, dplab.token.${LEARNER}`, SEAT_TOKEN)).toBe(`dplab.v1, dplab.token.${SEAT_TOKEN}`);
    expect(seatSubprotocols('dplab.v1', SEAT_TOKEN)).toBe('dplab.v1');
    const out = seatRequestHeaders(
      { host: 'p', upgrade: 'websocket', 'sec-websocket-protocol': `dplab.v1, dplab.token.${LEARNER}`, 'sec-websocket-key': 'k' },
      endpoint,
      SEAT_TOKEN,
      { upgrade: true },
    );
    expect(out).toMatchObject({
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-key': 'k',
      'sec-websocket-protocol': `dplab.v1, dplab.token.${SEAT_TOKEN}`,
    });
    expect(out.authorization).toBeUndefined();
  });
});

describe('through a forwarding server to a real runner', () => {
  let seat: RunningServer;
  let portal: Server;
  let portalPort: number;
  let endpoint: SeatEndpoint;
  let seen: IncomingHttpHeaders[] = [];
  let capture: Server;
  let captureEndpoint: SeatEndpoint;

  beforeAll(async () => {
    process.env.DPLAB_STATE_DIR = mkdtempSync(join(tmpdir(), 'dplab-fwd-state-'));
    const site = mkdtempSync(join(tmpdir(), 'dplab-fwd-site-'));
    writeFileSync(join(site, 'index.html'), '<h1>seat</h1>');
    seat = await startServer({ port: 0, portExplicit: true, token: SEAT_TOKEN, siteDir: site });
    endpoint = { url: `http://127.0.0.1:${seat.port}`, host: `127.0.0.1:${seat.port}` };
    capture = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'a=b' });
      res.end('{"ok":true}');
    });
    await new Promise<void>((r) => capture.listen(0, '127.0.0.1', () => r()));
    const cport = (capture.address() as { port: number }).port;
    captureEndpoint = { url: `http://127.0.0.1:${cport}`, host: `127.0.0.1:${cport}` };
    portal = createServer((req, res) => {
      const to = req.url!.startsWith('/capture') ? captureEndpoint : endpoint;
      forwardHttp(req, res, { endpoint: to, token: SEAT_TOKEN, path: req.url!.replace('/capture', '') });
    });
    portal.on('upgrade', (req, socket, head) => forwardUpgrade(req, socket, head, { endpoint, token: SEAT_TOKEN, path: req.url! }));
    await new Promise<void>((r) => portal.listen(0, '127.0.0.1', () => r()));
    portalPort = (portal.address() as { port: number }).port;
  });
  afterAll(async () => {
    portal.closeAllConnections();
    capture.closeAllConnections();
    await new Promise((r) => portal.close(r));
    await new Promise((r) => capture.close(r));
    await seat.close();
  });
  const via = `http://127.0.0.1:`;

  it('a GET with the learner token is answered by the seat as its own', async () => {
    const r = await http(`${via}${portalPort}`, '/api/session', { headers: { authorization: `Bearer ${LEARNER}` } });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ ok: true });
  });
  it('a POST passes the seat runner’s Origin check and carries its body', async () => {
    const r = await http(`${via}${portalPort}`, '/api/progress', {
      method: 'PUT',
      headers: { authorization: `Bearer ${LEARNER}`, origin: `http://127.0.0.1:${portalPort}`, 'content-type': 'application/json' },
      body: JSON.stringify({ version: 1, labs: {} }),
    });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ version: 1, labs: {} });
  });
  it('the seat never sees the learner token, a cookie or where the learner is; its cookies do not come back', async () => {
    seen = [];
    const r = await http(`${via}${portalPort}`, '/capture/api/x', {
      headers: { authorization: `Bearer ${LEARNER}`, cookie: 'portal=1', 'x-forwarded-for': '1.2.3.4', referer: 'http://evil/' },
    });
    expect(r.status).toBe(200);
    expect(r.headers['set-cookie']).toBeUndefined();
    expect(seen).toHaveLength(1);
    expect(JSON.stringify(seen[0])).not.toContain(LEARNER);
    expect(seen[0]).not.toHaveProperty('cookie');
    expect(seen[0]).not.toHaveProperty('x-forwarded-for');
    expect(seen[0]).not.toHaveProperty('referer');
    expect(seen[0].authorization).toBe(`Bearer ${SEAT_TOKEN}`);
    expect(seen[0].host).toBe(captureEndpoint.host);
  });
  it('the terminal socket opens on the seat with the learner token swapped for the seat’s, and the shell answers', async () => {
    const shell = mustOpen(
      await openShell(portalPort, { origin: `http://127.0.0.1:${portalPort}` }, undefined, ['dplab.v1', `dplab.token.${LEARNER}`]),
    );
    expect(shell.ws.protocol).toBe('dplab.v1');
    await shell.waitFor('"type":"ready"');
    shell.type('echo THROUGH-$((6*7))\r');
    await shell.waitFor('THROUGH-42');
    shell.close();
  });
  it('a seat that is gone is a 502 with words, and the forwarder keeps serving', async () => {
    const dead = createServer((req, res) =>
      forwardHttp(req, res, { endpoint: { url: 'http://127.0.0.1:1', host: '127.0.0.1:1' }, token: SEAT_TOKEN, path: '/api/x' }),
    );
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', () => r()));
    const r = await http(`${via}${(dead.address() as { port: number }).port}`, '/api/x');
    expect(r.status).toBe(502);
    expect(JSON.parse(r.body).error.message).toMatch(/not answering/);
    await new Promise((r2) => dead.close(r2));
  });
});
