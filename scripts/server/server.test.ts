/**
 * The runner over real sockets: a real pty behind a real WebSocket, and the security contract
 * attacked from outside. A refused upgrade must never start a shell.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from './http.ts';
import { http as httpTo, openShell as openShellOn, type Shell } from '../../test/fixtures/terminal-client.ts';
import { groupAlive } from '../terminals/process-tree.ts';
import { processAlive } from '../../test/fixtures/process-alive.ts';

const TOKEN = 'integration-token-0123456789';
let server: RunningServer;
let origin: string;
let site: string;

beforeAll(async () => {
  process.env.DPLAB_STATE_DIR = mkdtempSync(join(tmpdir(), 'dplab-state-'));
  site = mkdtempSync(join(tmpdir(), 'dplab-site-'));
  writeFileSync(join(site, 'index.html'), '<h1>course</h1>');
  mkdirSync(join(site, 'lessons'));
  writeFileSync(join(site, 'lessons', 'index.html'), '<h1>lessons</h1>');
  writeFileSync(join(site, '404.html'), '<h1>not here</h1>');
  server = await startServer({ port: 0, portExplicit: true, token: TOKEN, siteDir: site });
  origin = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server.close();
});

const http = (path: string, opts: Parameters<typeof httpTo>[2] = {}) => httpTo(origin, path, opts);
const openShell = (headers: Record<string, string>, query?: string, protocols?: string[]) =>
  openShellOn(server.port, headers, query, protocols);

const good = () => ({ authorization: `Bearer ${TOKEN}`, origin, host: `127.0.0.1:${server.port}` });
/** A signed-in shell that has said it is ready (a refusal fails the test with its status). */
async function readyShell(): Promise<Shell> {
  const shell = await openShell(good());
  if ('refused' in shell) throw new Error(`refused ${shell.refused}`);
  await shell.waitFor('"type":"ready"');
  return shell;
}

describe('HTTP API and pages', () => {
  it('health is open and says nothing sensitive', async () => {
    const r = await http('/api/health');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ ok: true });
    expect(r.body).not.toContain(TOKEN);
  });
  it('other API routes need the token', async () => {
    expect((await http('/api/session')).status).toBe(401);
    expect((await http('/api/session', { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await http('/api/session', { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect((await http('/api/does-not-exist')).status).toBe(401);
    expect((await http('/api/does-not-exist', { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
  });
  it('a foreign Host is refused everywhere, even with the token', async () => {
    expect(
      (await http('/api/session', { headers: { authorization: `Bearer ${TOKEN}`, host: `evil.example:${server.port}` } })).status,
    ).toBe(403);
    expect((await http('/', { headers: { host: `evil.example:${server.port}` } })).status).toBe(403);
  });
  it('a non-GET from a foreign Origin is refused, even with the token', async () => {
    const r = await http('/api/session', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, origin: 'http://evil.example' } });
    expect(r.status).toBe(403);
  });
  it('moves an old ?token= link into the fragment, with no cookie', async () => {
    const r = await http(`/lessons/?token=${TOKEN}&x=1`);
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe(`/lessons/?x=1#token=${TOKEN}`);
    expect(r.headers['set-cookie']).toBeUndefined();
  });
  it('a cookie is not a credential', async () => {
    expect((await http('/api/session', { headers: { cookie: `dplab_token_${server.port}=${TOKEN}` } })).status).toBe(401);
  });
  it('a wrong ?token= gets a page that says what to do, and no cookie', async () => {
    const r = await http('/?token=nope');
    expect(r.status).toBe(401);
    expect(r.headers['set-cookie']).toBeUndefined();
    expect(r.body).toContain('npm start');
  });
  it('the printed link carries the token in the fragment only', () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/#token=${TOKEN}`);
  });
  it('serves the site, 404 page, and never a file outside it', async () => {
    expect((await http('/')).body).toContain('course');
    expect((await http('/lessons')).body).toContain('lessons');
    const missing = await http('/nope/');
    expect(missing.status).toBe(404);
    expect(missing.body).toContain('not here');
    expect((await http('/../../etc/passwd')).body).not.toContain('root:');
    expect((await http('/%2e%2e/%2e%2e/etc/passwd')).body).not.toContain('root:');
  });
  it('a wrong method gets a 405 that names the right one, and the server keeps serving', async () => {
    const r = await http('/api/session', { method: 'POST', headers: { ...good(), 'content-type': 'application/json' }, body: '{nope' });
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET');
    expect((await http('/api/health')).status).toBe(200);
  });
});

describe('terminal WebSocket', () => {
  it('runs a real shell: echo a marker and read it back', async () => {
    const shell = await readyShell();
    shell.ws.send(JSON.stringify({ type: 'input', data: 'echo DPLAB-$((6*7))-OK\r' }));
    await shell.waitFor('DPLAB-42-OK');
    shell.ws.close();
  });

  it('ends the whole process group when the socket closes', async () => {
    const shell = await readyShell();
    // A background job (its own process group under job control) and the shell itself.
    shell.ws.send(JSON.stringify({ type: 'input', data: 'sleep 300 & echo "PID""S $$ $!"\r' }));
    await shell.waitFor('PIDS ');
    await new Promise((r) => setTimeout(r, 100));
    const m = /PIDS (\d+) (\d+)/.exec(shell.output());
    expect(m).not.toBeNull();
    const [shellPid, jobPid] = [Number(m![1]), Number(m![2])];
    expect(groupAlive(shellPid)).toBe(true);
    shell.ws.close();
    const deadline = Date.now() + 5000;
    while ((groupAlive(shellPid) || processAlive(jobPid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(groupAlive(shellPid)).toBe(false);
    expect(processAlive(jobPid)).toBe(false);
  });

  it('answers bad control messages with an error frame and keeps the shell', async () => {
    const shell = await readyShell();
    shell.ws.send('this is not json');
    shell.ws.send(JSON.stringify({ type: 'resize', cols: 1e9, rows: -3 }));
    shell.ws.send(JSON.stringify({ type: 'launch-missiles' }));
    shell.ws.send(Buffer.from([1, 2, 3]));
    await shell.waitFor('launch-missiles');
    const errors = shell.control.filter((c) => c.type === 'error').map((c) => String(c.message));
    expect(errors.some((e) => e.includes('not valid JSON'))).toBe(true);
    expect(errors.some((e) => e.includes('resize needs integer'))).toBe(true);
    expect(errors.some((e) => e.includes('Binary frames are output only'))).toBe(true);
    shell.ws.send(JSON.stringify({ type: 'input', data: 'echo STILL-$((1+1))\r' }));
    await shell.waitFor('STILL-2');
    shell.ws.close();
  });

  it('keeps up with a flood and still answers Ctrl-C (flow control)', async () => {
    const shell = await readyShell();
    // The client here never acknowledges, so the pty is paused after the high watermark…
    shell.ws.send(JSON.stringify({ type: 'input', data: 'yes FLOOD\r' }));
    await shell.waitFor('FLOOD\r\nFLOOD');
    await new Promise((r) => setTimeout(r, 500));
    const before = shell.output().length;
    await new Promise((r) => setTimeout(r, 500));
    // …so output stops growing beyond what was in flight.
    expect(shell.output().length - before).toBeLessThan(256 * 1024);
    // Acknowledge everything and interrupt: the prompt comes back.
    shell.ws.send(JSON.stringify({ type: 'ack', bytes: Buffer.byteLength(shell.output()) }));
    shell.ws.send(JSON.stringify({ type: 'input', data: '\x03' }));
    shell.ws.send(JSON.stringify({ type: 'input', data: 'echo AFTER-$((2+3))\r' }));
    const ackLoop = setInterval(() => shell.ws.send(JSON.stringify({ type: 'ack', bytes: Buffer.byteLength(shell.output()) })), 50);
    try {
      await shell.waitFor('AFTER-5', 10_000);
    } finally {
      clearInterval(ackLoop);
      shell.ws.close();
    }
  });

  describe('refused upgrades start no shell', () => {
    const cases: Array<[string, () => Record<string, string>, number]> = [
      ['no token', () => ({ origin, host: `127.0.0.1:${server.port}` }), 401],
      ['wrong token', () => ({ ...good(), authorization: 'Bearer wrong' }), 401],
      ['foreign Origin', () => ({ ...good(), origin: 'http://evil.example' }), 403],
      ['look-alike Origin', () => ({ ...good(), origin: `http://127.0.0.1:${server.port}.evil.com` }), 403],
      ['missing Origin', () => ({ authorization: `Bearer ${TOKEN}`, host: `127.0.0.1:${server.port}` }), 403],
      ['foreign Host', () => ({ ...good(), host: `evil.example:${server.port}`, origin: `http://evil.example:${server.port}` }), 403],
    ];
    it.each(cases)('%s', async (_name, headers, status) => {
      const before = server.runner.openTerminals;
      const r = await openShell(headers());
      expect('refused' in r && r.refused).toBe(status);
      expect(server.runner.openTerminals).toBeLessThanOrEqual(before);
    });
    it('an unknown mode', async () => {
      const r = await openShell(good(), 'cols=80&rows=24&mode=../../etc');
      expect('refused' in r && r.refused).toBe(400);
    });
  });
});

describe('closing the runner', () => {
  it('resolves only when its shells have ended, even one that ignores SIGHUP', async () => {
    const own = await startServer({ port: 0, portExplicit: true, token: TOKEN, siteDir: site });
    const headers = { authorization: `Bearer ${TOKEN}`, origin: `http://127.0.0.1:${own.port}`, host: `127.0.0.1:${own.port}` };
    const shell = await openShellOn(own.port, headers);
    if ('refused' in shell) throw new Error(`refused ${shell.refused}`);
    await shell.waitFor('"type":"ready"');
    // Such a shell lives until the SIGKILL after the grace period; what closed the runner next
    // removes the state folder, which that shell may still write to (bash saves its history).
    shell.ws.send(JSON.stringify({ type: 'input', data: `trap '' HUP; echo "PID""S $$"\r` }));
    await shell.waitFor('PIDS ');
    const pid = Number(/PIDS (\d+)/.exec(shell.output())![1]);
    expect(groupAlive(pid)).toBe(true);
    await own.close();
    // Killed by then; reaping it may take a moment more, far less than the 1.5 s grace.
    const deadline = Date.now() + 500;
    while (groupAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(groupAlive(pid)).toBe(false);
  });

  it("resolves only when a lab terminal's cluster-notice read has been cancelled and has ended", async () => {
    // The read runs kind and docker: left running, they wrote into a state folder already removed.
    let seenAbort = false;
    let settled = false;
    const own = await startServer({
      port: 0,
      portExplicit: true,
      token: TOKEN,
      siteDir: site,
      terminalNotice: (_mode, signal) =>
        new Promise<string | null>((ok) =>
          signal.addEventListener('abort', () => {
            seenAbort = true;
            // Ending takes a moment, as a killed command does.
            setTimeout(() => {
              settled = true;
              ok(null);
            }, 200);
          }),
        ),
    });
    const headers = { authorization: `Bearer ${TOKEN}`, origin: `http://127.0.0.1:${own.port}`, host: `127.0.0.1:${own.port}` };
    const shell = await openShellOn(own.port, headers, 'cols=80&rows=24&mode=iptables');
    if ('refused' in shell) throw new Error(`refused ${shell.refused}`);
    await shell.waitFor('"type":"ready"');
    await own.close();
    expect(seenAbort).toBe(true);
    expect(settled).toBe(true);
  });
});
