/**
 * The terminal watch socket over real sockets and a real shell, attacked from outside: the
 * viewer token opens the watch and nothing else, a foreign Origin is refused, and what a
 * watcher types never reaches the shell.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from './http.ts';
import { weakTokenReason } from './security.ts';
import { http as httpTo, mustOpen, openShell, openWatch, type Shell } from '../../test/fixtures/terminal-client.ts';
import { broadcastStateSchema } from '../wire/terminal.ts';

const TOKEN = 'watch-test-token-0123456789abcdef';
let server: RunningServer;
let origin: string;
let site: string;
let scratch: string;

beforeAll(async () => {
  process.env.DPLAB_STATE_DIR = mkdtempSync(join(tmpdir(), 'dplab-state-'));
  site = mkdtempSync(join(tmpdir(), 'dplab-site-'));
  scratch = mkdtempSync(join(tmpdir(), 'dplab-watch-'));
  server = await startServer({ port: 0, portExplicit: true, token: TOKEN, siteDir: site });
  origin = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server.close();
  rmSync(site, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

const viewer = () => server.runner.viewerToken;
const presenter = () => ({ authorization: `Bearer ${TOKEN}`, origin });
const asViewer = () => ({ authorization: `Bearer ${viewer()}`, origin });
const http = (path: string, opts: Parameters<typeof httpTo>[2] = {}) => httpTo(origin, path, opts);

async function presenterShell(): Promise<Shell & { id: string }> {
  const shell = mustOpen(await openShell(server.port, presenter()));
  await shell.waitFor('"type":"ready"');
  const ready = shell.control.find((c) => c.type === 'ready');
  return Object.assign(shell, { id: String(ready?.terminal) });
}

describe('the viewer link', () => {
  it('carries its own strong token, different from the runner token', () => {
    expect(server.viewerUrl).toBe(`http://127.0.0.1:${server.port}/watch/#viewer=${viewer()}`);
    expect(weakTokenReason(viewer())).toBeNull();
    expect(viewer()).not.toBe(TOKEN);
  });
});

describe('the watch socket’s gate', () => {
  it('refuses the viewer token on the terminal socket: no shell starts', async () => {
    const before = server.runner.openTerminals;
    const r = await openShell(server.port, asViewer());
    expect('refused' in r && r.refused).toBe(401);
    const p = await openShell(server.port, { origin }, undefined, ['dplab.v1', `dplab.token.${viewer()}`]);
    expect('refused' in p && p.refused).toBe(401);
    expect(server.runner.openTerminals).toBe(before);
  });

  it.each([
    ['GET', '/api/session'],
    ['GET', '/api/terminal/broadcast'],
    ['GET', '/api/progress'],
    ['POST', '/api/terminal/broadcast'],
    ['POST', '/api/labs/first-service/reset'],
    ['POST', '/api/clusters/iptables/up'],
    ['PUT', '/api/progress'],
  ])('refuses the viewer token on %s %s', async (method, path) => {
    const r = await http(path, { method, headers: { ...asViewer(), 'content-type': 'application/json' }, body: '{"terminal":null}' });
    expect(r.status).toBe(401);
  });

  it('refuses a foreign or missing Origin with either token, a wrong token, and a foreign Host', async () => {
    for (const token of [TOKEN, viewer()]) {
      const evil = await openWatch(server.port, { authorization: `Bearer ${token}`, origin: 'http://evil.example' });
      expect('refused' in evil && evil.refused).toBe(403);
      const none = await openWatch(server.port, { authorization: `Bearer ${token}` });
      expect('refused' in none && none.refused).toBe(403);
      const host = await openWatch(server.port, { authorization: `Bearer ${token}`, origin, host: `evil.example:${server.port}` });
      expect('refused' in host && host.refused).toBe(403);
    }
    const wrong = await openWatch(server.port, { authorization: `Bearer ${viewer()}x`, origin });
    expect('refused' in wrong && wrong.refused).toBe(401);
    const missing = await openWatch(server.port, { origin });
    expect('refused' in missing && missing.refused).toBe(401);
  });
});

describe('watching the presenter’s shell', { timeout: 30_000 }, () => {
  it('a late viewer sees the screen, then live output; what it types and resizes never reaches the shell', async () => {
    const shell = await presenterShell();
    shell.type('echo EARLY-$((20+1))\r');
    await shell.waitFor('EARLY-21');

    // The viewer page's way in: the viewer token as a subprotocol beside dplab.v1.
    const watch = mustOpen(await openWatch(server.port, { origin }, ['dplab.v1', `dplab.token.${viewer()}`]));
    expect(watch.ws.protocol).toBe('dplab.v1');
    await watch.waitFor('EARLY-21');
    expect(watch.control[0]).toMatchObject({ type: 'mirror', terminal: shell.id, cols: 80, rows: 24 });

    shell.type('echo LIVE-$((40+2))\r');
    await watch.waitFor('LIVE-42');

    const planted = join(scratch, 'from-viewer');
    watch.type(`touch ${planted}; echo VIEWER-$((1+1))\r`);
    watch.ws.send(JSON.stringify({ type: 'resize', cols: 33, rows: 7 }));
    watch.ws.send(Buffer.from('echo binary\r'));
    watch.type('\x03');
    await watch.waitFor('read-only');
    // The shell answers the presenter after everything the viewer sent has arrived.
    shell.type('stty size; echo SYNC-$((1+2))\r');
    await shell.waitFor('SYNC-3');
    await watch.waitFor('SYNC-3');
    expect(shell.output()).not.toContain('VIEWER');
    expect(shell.output()).not.toContain('binary');
    expect(shell.output()).toContain('24 80');
    expect(existsSync(planted)).toBe(false);
    expect(watch.control.filter((c) => c.type === 'notice' && String(c.message).includes('read-only'))).toHaveLength(1);
    expect(watch.control.filter((c) => c.type === 'error')).toEqual([]);
    watch.close();
    shell.close();
  });

  it('follows the newest shell, or the one the presenter pins, and says when there is none', async () => {
    const watch = mustOpen(await openWatch(server.port, asViewer()));
    const a = await presenterShell();
    const b = await presenterShell();
    await expect
      .poll(() => watch.control.filter((c) => c.type === 'mirror').map((c) => c.terminal))
      .toEqual(expect.arrayContaining([a.id, b.id]));
    const pin = await http('/api/terminal/broadcast', {
      method: 'POST',
      headers: { ...presenter(), 'content-type': 'application/json' },
      body: JSON.stringify({ terminal: a.id }),
    });
    expect(pin.status).toBe(200);
    expect(broadcastStateSchema.parse(JSON.parse(pin.body))).toMatchObject({ terminal: a.id, pinned: true });
    await expect.poll(() => watch.control.filter((c) => c.type === 'mirror').at(-1)?.terminal).toBe(a.id);
    a.type('echo PINNED-$((3*3))\r');
    await watch.waitFor('PINNED-9');

    const unknown = await http('/api/terminal/broadcast', {
      method: 'POST',
      headers: { ...presenter(), 'content-type': 'application/json' },
      body: '{"terminal":"t0"}',
    });
    expect(unknown.status).toBe(404);

    a.close();
    await expect.poll(() => watch.control.filter((c) => c.type === 'mirror').at(-1)?.terminal, { timeout: 8000 }).toBe(b.id);
    b.close();
    await expect.poll(() => watch.control.filter((c) => c.type === 'mirror').at(-1)?.terminal, { timeout: 8000 }).toBeNull();
    const state = broadcastStateSchema.parse(JSON.parse((await http('/api/terminal/broadcast', { headers: presenter() })).body));
    expect(state).toMatchObject({ terminal: null, pinned: false, watchers: 1 });
    watch.close();
  });
});
