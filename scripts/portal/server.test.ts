/**
 * The portal's listening rules and routes over a fake seat backend (no processes): plain HTTP
 * only on loopback unless TLS is terminated in front, then the public name with its https
 * origin; pages and the learner banner; a seat that is not ready yet; a connection flood past the cap.
 */
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { http } from '../../test/fixtures/terminal-client.ts';
import { interfaceAddresses } from '../server/http.ts';
import { HTTP_LIMITS } from '../server/core/http-server.ts';
import { dashboardStateSchema, joinResponseSchema, learnerViewSchema } from '../wire/portal.ts';
import type { SeatBackend, SeatSpec, SeatStatus } from './seat-backend.ts';
import { startPortal, type RunningPortal } from './server.ts';
import { WorkshopStore } from './workshop-store.ts';

/** Seats that stay pending: enough to join, nothing to forward to. */
class PendingBackend implements SeatBackend {
  readonly kind = 'local' as const;
  readonly made: SeatSpec[] = [];
  async create(spec: SeatSpec): Promise<SeatStatus> {
    this.made.push(spec);
    return { id: spec.id, phase: 'pending', message: 'Starting the runner…' };
  }
  async resume(spec: SeatSpec): Promise<SeatStatus> {
    return this.status(spec.id);
  }
  async status(id: string): Promise<SeatStatus> {
    return this.made.some((s) => s.id === id) ? { id, phase: 'pending', message: 'Starting the runner…' } : { id, phase: 'deleted' };
  }
  async list(): Promise<SeatStatus[]> {
    return Promise.all(this.made.map((s) => this.status(s.id)));
  }
  readonly deleted: string[] = [];
  async delete(id: string): Promise<void> {
    this.deleted.push(id);
  }
}

const lab = { id: 'first-service', title: 'First', steps: [{ id: 'a', title: 'A' }] };
const site = mkdtempSync(join(tmpdir(), 'dplab-portal-site-'));
writeFileSync(join(site, 'index.html'), '<!doctype html><html><head><title>c</title></head><body>course</body></html>');
let running: RunningPortal | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('where the portal listens', () => {
  it('refuses a non-loopback address over plain HTTP, with the way out', async () => {
    await expect(startPortal({ backend: new PendingBackend(), lab, siteDir: site, host: '0.0.0.0', port: 0 })).rejects.toThrow(
      /plain HTTP on 0\.0\.0\.0/,
    );
  });
  it('--behind-tls needs the public name', async () => {
    await expect(
      startPortal({ backend: new PendingBackend(), lab, siteDir: site, host: '0.0.0.0', port: 0, behindTls: true }),
    ).rejects.toThrow(/--public-host/);
  });
  it('behind TLS: the public name with its https origin joins; its http origin and other names do not', async () => {
    running = await startPortal({
      backend: new PendingBackend(),
      lab,
      siteDir: site,
      host: '0.0.0.0',
      port: 0,
      behindTls: true,
      publicHosts: ['lab.example.org'],
      code: 'ABCD12',
    });
    expect(running.joinUrl).toBe('https://lab.example.org/portal/join');
    const loop = `http://127.0.0.1:${running.port}`;
    const join = (headers: Record<string, string>) =>
      http(loop, '/portal/api/join', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ code: 'abcd12', name: 'Ada' }),
      });
    expect((await join({ host: 'lab.example.org', origin: 'https://lab.example.org' })).status).toBe(200);
    expect((await join({ host: 'lab.example.org', origin: 'http://lab.example.org' })).status).toBe(403);
    expect((await join({ host: 'evil.example', origin: 'https://evil.example' })).status).toBe(403);
    expect((await http(loop, '/portal/join', { headers: { host: 'lab.example.org' } })).status).toBe(200);
    expect((await http(loop, '/portal/join', { headers: { host: 'evil.example' } })).status).toBe(403);
    // This host's own address over plain HTTP is not the public name.
    for (const address of interfaceAddresses().filter((a) => !a.includes(':')))
      expect((await http(loop, '/portal/join', { headers: { host: `${address}:${running.port}` } })).status).toBe(403);
  });
});

describe('routes', () => {
  it('course pages load the learner banner script; the bare link goes to the join page', async () => {
    running = await startPortal({ backend: new PendingBackend(), lab, siteDir: site, port: 0 });
    const page = await http(running.origin, '/');
    expect(page.status).toBe(302);
    expect(page.headers.location).toBe('/portal/join');
    const course = await http(running.origin, '/index.html');
    expect(course.body).toContain('<script src="/portal/assets/learner.js" defer></script></head>');
    expect(String(course.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
    const join = await http(running.origin, '/portal/join');
    expect(join.body).toContain('Join the workshop');
  });
  it('a learner whose seat is still starting gets 503 with the reason, and a banner that says so', async () => {
    const backend = new PendingBackend();
    running = await startPortal({ backend, lab, siteDir: site, port: 0, code: 'ABCD12' });
    const r = await http(running.origin, '/portal/api/join', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: running.origin },
      body: JSON.stringify({ code: 'ABCD12', name: '  Ada  ' }),
    });
    // The answers have the wire's shape (scripts/wire/portal.ts), which the pages read.
    const { token, seat, start } = joinResponseSchema.parse(JSON.parse(r.body));
    expect([seat, start]).toEqual(['s01', '/labs/first-service/']);
    // The learner's token is not the seat runner's.
    expect(backend.made[0].runnerToken).not.toBe(token);
    const api = await http(running.origin, '/api/labs', { headers: { authorization: `Bearer ${token}` } });
    expect(api.status).toBe(503);
    expect(JSON.parse(api.body).error.message).toBe('Starting the runner…');
    const me = learnerViewSchema.parse(
      JSON.parse((await http(running.origin, '/portal/api/me', { headers: { authorization: `Bearer ${token}` } })).body),
    );
    expect(me).toMatchObject({ seat: 's01', name: 'Ada', phase: 'pending', ended: false });
    // The instructor is not a learner, and has no seat to forward to.
    expect((await http(running.origin, '/api/labs', { headers: { authorization: `Bearer ${running.instructorToken}` } })).status).toBe(403);
  });
  it('a name that is empty or carries control characters is refused with words', async () => {
    running = await startPortal({ backend: new PendingBackend(), lab, siteDir: site, port: 0, code: 'ABCD12' });
    for (const name of ['   ', 'Ada\u0007', 'x'.repeat(41)]) {
      const r = await http(running.origin, '/portal/api/join', {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: running.origin },
        body: JSON.stringify({ code: 'ABCD12', name }),
      });
      expect(r.status, name).toBe(400);
      expect(JSON.parse(r.body).error.message).toMatch(/name/i);
    }
  });
});

describe('the instructor frees one seat (issue 36)', () => {
  it("DELETE /portal/api/seats/:id: its learner's token stops working, its seat is deleted; a learner cannot do it", async () => {
    const backend = new PendingBackend();
    running = await startPortal({ backend, lab, siteDir: site, port: 0, code: 'ABCD12', instructorToken: 'i'.repeat(40) });
    const origin = `http://127.0.0.1:${running.port}`;
    const h = (token: string) => ({ authorization: `Bearer ${token}`, origin, 'content-type': 'application/json' });
    const joined = await http(origin, '/portal/api/join', {
      method: 'POST',
      headers: h(''),
      body: JSON.stringify({ code: 'ABCD12', name: 'Ada' }),
    });
    const { token, seat } = JSON.parse(joined.body) as { token: string; seat: string };
    expect((await http(origin, '/portal/api/me', { headers: h(token) })).status).toBe(200);
    expect((await http(origin, `/portal/api/seats/${seat}`, { method: 'DELETE', headers: h(token) })).status).toBe(403);
    expect((await http(origin, `/portal/api/seats/${seat}`, { method: 'DELETE', headers: h('i'.repeat(40)) })).status).toBe(200);
    expect(backend.deleted).toEqual([seat]);
    expect((await http(origin, '/portal/api/me', { headers: h(token) })).status).toBe(401);
    expect(running.workshop.state().seats.map((s) => s.id)).not.toContain(seat);
    expect((await http(origin, '/portal/api/seats/s99', { method: 'DELETE', headers: h('i'.repeat(40)) })).status).toBe(404);
  });
});

describe('tokenless upgrades held half-open (issue 36)', () => {
  it('are closed by the portal once refused, never held', async () => {
    running = await startPortal({ backend: new PendingBackend(), lab, siteDir: site, port: 0 });
    const port = running.port;
    const held: Socket[] = [];
    for (let i = 0; i < 50; i++) {
      // Reads the refusal, never closes its side.
      const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
      socket.on('error', () => undefined);
      socket.write(
        `GET /api/terminal HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: http://127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      );
      await new Promise((r) => socket.once('data', r));
      held.push(socket);
    }
    const open = () => new Promise<number>((r) => running!.server.getConnections((_e, n) => r(n)));
    const deadline = Date.now() + 10_000;
    while ((await open()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await open()).toBe(0);
    held.forEach((s) => s.destroy());
  });
});

describe('a connection flood', () => {
  it('past the cap, the quietest sockets make room: health answers at once', async () => {
    running = await startPortal({ backend: new PendingBackend(), lab, siteDir: site, port: 0 });
    const port = running.port;
    const silent = () =>
      new Promise<Socket>((resolve, reject) => {
        const s = connect(port, '127.0.0.1', () => resolve(s));
        s.on('error', () => undefined);
        s.once('error', reject);
        s.resume();
      });
    const held: Socket[] = [];
    try {
      // The portal's cap (HTTP_LIMITS.maxConnections * 8) and a few more, a hundred at a time.
      const cap = HTTP_LIMITS.maxConnections * 8;
      while (held.length < cap + 10)
        held.push(...(await Promise.all(Array.from({ length: Math.min(100, cap + 10 - held.length) }, silent))));
      await new Promise((r) => setTimeout(r, 300));
      const t0 = performance.now();
      const r = await http(running.origin, '/api/health', { timeoutMs: 2000 });
      expect(r.status).toBe(200);
      expect(performance.now() - t0).toBeLessThan(1000);
    } finally {
      held.forEach((s) => s.destroy());
    }
  });
});

describe('seats an earlier portal left', () => {
  it('are removed before any new seat is made; one that will not go keeps its id out of the new numbering', async () => {
    const backend = new PendingBackend();
    backend.made.push({ id: 's01', runnerToken: 'x', warm: [] }, { id: 's02', runnerToken: 'y', warm: [] });
    const deleted: string[] = [];
    backend.delete = async (id: string) => {
      if (id === 's02') throw new Error('its runner does not answer');
      deleted.push(id);
      backend.made.splice(
        backend.made.findIndex((s) => s.id === id),
        1,
      );
    };
    const notes: string[] = [];
    running = await startPortal({ backend, lab, siteDir: site, port: 0, seats: 2, note: (l) => notes.push(l) });
    expect(deleted).toEqual(['s01']);
    expect(notes).toEqual([
      'Removed 1 seat(s) an earlier portal left: s01.',
      'Could not remove seat s02, left by an earlier portal: its runner does not answer',
    ]);
    expect(backend.made.map((s) => s.id)).toEqual(['s02', 's01', 's03']);
  });
});

describe('a portal started again on its state folder', () => {
  const T = (c: string) => c.repeat(32);
  it('takes back each seat it kept, with its learner and token; one whose record does not read is set aside, not deleted', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'dplab-portal-store-'));
    const store = new WorkshopStore(join(stateDir, 'workshop'));
    store.writeWorkshop({ code: 'ROOM77', instructorToken: T('i') });
    store.writeSeat({ id: 's01', runnerToken: T('r'), learner: { name: 'Ada', joinedAt: 1, token: T('a') } });
    store.writeSeat({ id: 's02', runnerToken: T('q') });
    // s03's record was cut short (a disk full, a hand edit); s04 has none at all (made before records were kept).
    writeFileSync(join(stateDir, 'workshop', 'seats', 's03.json'), '{"v":1,"id":"s03","runnerTok');
    const backend = new PendingBackend();
    backend.made.push(...['s01', 's02', 's03', 's04'].map((id) => ({ id, runnerToken: 'earlier', warm: [] })));
    const resumed: SeatSpec[] = [];
    backend.resume = async (spec) => {
      resumed.push(spec);
      return backend.status(spec.id);
    };
    const notes: string[] = [];
    // Started again as it was first started, with three seats made ahead: the seats taken back count.
    running = await startPortal({ backend, lab, siteDir: site, port: 0, stateDir, seats: 3, note: (l) => notes.push(l) });

    expect(running.code).toBe('ROOM77');
    expect(dashboardStateSchema.parse(running.workshop.state()).seats.map((s) => s.id)).toEqual(['s01', 's02', 's03']);
    expect(running.instructorToken).toBe(T('i'));
    expect(resumed).toEqual([
      { id: 's01', runnerToken: T('r'), warm: [] },
      { id: 's02', runnerToken: T('q'), warm: [] },
    ]);
    expect(backend.deleted).toEqual(['s04']);
    expect(notes[0]).toBe('Took back 2 seat(s) an earlier portal left: s01, s02.');
    expect(notes[1]).toMatch(/^Seat s03: Set aside after a restart: its saved state does not read \(not JSON/);
    expect(notes[2]).toBe('Removed 1 seat(s) an earlier portal left: s04.');
    // The set-aside seat: on the dashboard, never handed out, its record untouched.
    const row = running.workshop.state().seats.find((s) => s.id === 's03');
    expect(row).toMatchObject({ phase: 'failed', message: expect.stringMatching(/^Set aside/) });
    expect(readFileSync(join(stateDir, 'workshop', 'seats', 's03.json'), 'utf8')).toBe('{"v":1,"id":"s03","runnerTok');
    // Ada's page, with the token it kept, names her seat again.
    const origin = `http://127.0.0.1:${running.port}`;
    const me = await http(origin, '/portal/api/me', { headers: { authorization: `Bearer ${T('a')}`, host: `127.0.0.1:${running.port}` } });
    expect(me.status, me.body).toBe(200);
    expect(JSON.parse(me.body)).toMatchObject({ seat: 's01', name: 'Ada' });
    // A newcomer gets the free seat taken back (s02), never the set-aside one; the join is kept at once.
    const joined = await http(origin, '/portal/api/join', {
      method: 'POST',
      headers: { origin, host: `127.0.0.1:${running.port}`, 'content-type': 'application/json' },
      body: JSON.stringify({ code: 'room77', name: 'Bob' }),
    });
    expect(joined.status, joined.body).toBe(200);
    const bob = JSON.parse(joined.body) as { seat: string; token: string };
    expect(bob.seat).toBe('s02');
    expect(store.readSeat('s02')).toMatchObject({ ok: true, record: { learner: { name: 'Bob', token: bob.token } } });
    // Tokens at rest: the portal's user's alone.
    expect(statSync(join(stateDir, 'workshop')).mode & 0o777).toBe(0o700);
    expect(statSync(join(stateDir, 'workshop', 'seats', 's02.json')).mode & 0o777).toBe(0o600);
    expect(statSync(join(stateDir, 'workshop', 'workshop.json')).mode & 0o777).toBe(0o600);
    // The instructor removes the set-aside seat: then, and only then, it goes with its record.
    await running.workshop.removeSeat('s03');
    expect(backend.deleted).toEqual(['s04', 's03']);
    expect(existsSync(join(stateDir, 'workshop', 'seats', 's03.json'))).toBe(false);
  });
});

/** A WebSocket upgrade as a page would send it; resolves with the status the server answered. */
function upgrade(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      path,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        ...headers,
      },
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve({ status: 101, body: '' });
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a page on another name rebound to the portal (DNS rebinding)', () => {
  it('reaches nothing but /api/health, which says {"ok":true} and no more, even with every token in hand', async () => {
    const backend = new PendingBackend();
    running = await startPortal({ backend, lab, siteDir: site, port: 0, code: 'ROOM42' });
    const port = running.port;
    const ours = { host: `127.0.0.1:${port}`, origin: running.origin, 'content-type': 'application/json' };
    const joined = await http(running.origin, '/portal/api/join', {
      method: 'POST',
      headers: ours,
      body: JSON.stringify({ code: 'ROOM42', name: 'Ada' }),
    });
    const learner = (JSON.parse(joined.body) as { token: string }).token;
    const secrets = [learner, running.instructorToken, backend.made[0]!.runnerToken, 'ROOM42'];
    // The attacker's page: its own name, resolved to 127.0.0.1 after the page loaded.
    const evil = { host: `evil.example:${port}`, origin: `http://evil.example:${port}`, 'content-type': 'application/json' };
    const as = (token: string) => ({ ...evil, authorization: `Bearer ${token}` });
    const requests: [string, string, Record<string, string>, string?][] = [
      ['GET', '/', evil],
      ['GET', '/index.html', evil],
      ['GET', '/portal/join', evil],
      ['GET', '/portal/dashboard', evil],
      ['GET', '/portal/assets/dashboard.js', evil],
      ['POST', '/portal/api/join', evil, JSON.stringify({ code: 'ROOM42', name: 'Eve' })],
      ['GET', '/portal/api/me', as(learner)],
      ['GET', '/portal/api/state', as(running.instructorToken)],
      ['GET', '/portal/api/events', as(running.instructorToken)],
      ['POST', '/portal/api/broadcast', as(running.instructorToken), JSON.stringify({ message: 'pwned' })],
      ['DELETE', '/portal/api/seats/s01', as(running.instructorToken)],
      ['POST', '/portal/api/end', as(running.instructorToken)],
      ['GET', '/api/labs', as(learner)],
      ['GET', '/api/progress', as(learner)],
      ['POST', '/api/labs/first-service/steps/a/solve', as(learner), '{}'],
      ['GET', '/api/health/../../portal/api/state', as(running.instructorToken)],
    ];
    for (const [method, path, headers, body] of requests) {
      const r = await http(running.origin, path, { method, headers, body, timeoutMs: 5_000 });
      expect(r.status, `${method} ${path}: ${r.body}`).toBe(403);
      for (const secret of secrets) expect(r.body, `${method} ${path}`).not.toContain(secret);
    }
    for (const path of ['/api/terminal', '/portal/api/seats/s01/watch']) {
      for (const token of [learner, running.instructorToken]) {
        const r = await upgrade(port, path, { ...evil, 'sec-websocket-protocol': `dplab.v1, dplab.token.${token}` });
        expect(r.status, `${path}: ${r.body}`).toBe(403);
      }
    }
    // Nothing happened: no broadcast, the seat still there, the workshop not ended.
    const state = running.workshop.state();
    expect([state.broadcast, state.ended, state.seats.map((s) => s.id)]).toEqual([undefined, false, ['s01']]);
    expect(backend.deleted).toEqual([]);

    // Health: to any other name (a probe by pod IP, the rebound page) the same two fixed bytes of news.
    for (const host of [`evil.example:${port}`, `10.244.1.7:${port}`, '10.244.1.7']) {
      const r = await http(running.origin, '/api/health?verbose=1', { headers: { ...as(running.instructorToken), host } });
      expect([r.status, r.body], host).toEqual([200, '{"ok":true}']);
      expect(r.headers['access-control-allow-origin']).toBeUndefined();
    }
    const act = await http(running.origin, '/api/health', { method: 'POST', headers: as(running.instructorToken), body: '{}' });
    expect(act.status).toBe(405);
    // Its own name gets the portal's name as before.
    expect(JSON.parse((await http(running.origin, '/api/health')).body)).toEqual({ ok: true, name: 'dataplane-lab-portal' });
  });
});
