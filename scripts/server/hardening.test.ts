/**
 * The findings of issue 10, attacked over real sockets against a real runner: the token only
 * by header or subprotocol, the static server's reach (symlinks, dotfiles), page headers, the
 * shell cap, wrong-token guesses, slow clients and the connection limit.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from './http.ts';
import { http as httpTo, mustOpen, openShell } from '../../test/fixtures/terminal-client.ts';
import { GUESS_LIMIT } from './guess-limit.ts';

const TOKEN = 'hardening-token-0123456789abcdef';
const MAX_TERMINALS = 2;
const LIMITS = { headersMs: 1_000, requestMs: 2_000, keepAliveMs: 1_000, checkEveryMs: 200, maxConnections: 40 };
let server: RunningServer;
let origin: string;
let outside: string;

beforeAll(async () => {
  process.env.DPLAB_STATE_DIR = mkdtempSync(join(tmpdir(), 'dplab-state-'));
  const site = mkdtempSync(join(tmpdir(), 'dplab-site-'));
  outside = mkdtempSync(join(tmpdir(), 'dplab-outside-'));
  writeFileSync(join(outside, 'secret.txt'), 'OUTSIDE-SECRET');
  mkdirSync(join(outside, 'dir'));
  writeFileSync(join(outside, 'dir', 'index.html'), 'OUTSIDE-DIR');
  writeFileSync(
    join(site, 'index.html'),
    '<!doctype html><script>console.log("inline")</script><script type="module" src="/x.js"></script><h1>course</h1>',
  );
  writeFileSync(join(site, '404.html'), '<h1>not here</h1>');
  mkdirSync(join(site, 'watch'));
  writeFileSync(join(site, 'watch', 'index.html'), '<h1>viewer</h1>');
  writeFileSync(join(site, '.dplab-build'), 'BUILD-STAMP');
  mkdirSync(join(site, '.git'));
  writeFileSync(join(site, '.git', 'config'), 'GIT-CONFIG');
  mkdirSync(join(site, 'inside'));
  writeFileSync(join(site, 'inside', 'page.txt'), 'INSIDE');
  symlinkSync(join(outside, 'secret.txt'), join(site, 'leak.txt'));
  symlinkSync(join(outside, 'dir'), join(site, 'leakdir'));
  symlinkSync(join(site, 'inside', 'page.txt'), join(site, 'alias.txt'));
  server = await startServer({ port: 0, portExplicit: true, token: TOKEN, siteDir: site, maxTerminals: MAX_TERMINALS, limits: LIMITS });
  origin = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server.close();
});

const http = (path: string, opts: Parameters<typeof httpTo>[2] = {}) => httpTo(origin, path, opts);
const pageHeaders = () => ({ origin, host: `127.0.0.1:${server.port}` });

describe('the token travels only by header or subprotocol', () => {
  it('a socket with the token subprotocol opens, and the server answers dplab.v1 only', async () => {
    const shell = mustOpen(await openShell(server.port, pageHeaders(), undefined, ['dplab.v1', `dplab.token.${TOKEN}`]));
    expect(shell.ws.protocol).toBe('dplab.v1');
    await shell.waitFor('"type":"ready"');
    shell.close();
  });
  it('a wrong subprotocol token, or a token in the query, starts no shell', async () => {
    const before = server.runner.openTerminals;
    const wrong = await openShell(server.port, pageHeaders(), undefined, ['dplab.v1', 'dplab.token.nope']);
    expect('refused' in wrong && wrong.refused).toBe(401);
    const query = await openShell(server.port, pageHeaders(), `cols=80&rows=24&token=${TOKEN}`, ['dplab.v1']);
    expect('refused' in query && query.refused).toBe(401);
    expect(server.runner.openTerminals).toBe(before);
  });
});

describe('a paste in flight', () => {
  it('Ctrl-C drops the rest of a queued paste and gives the prompt back', async () => {
    await untilNoTerminals();
    const shell = mustOpen(await openShell(server.port, { ...pageHeaders(), authorization: `Bearer ${TOKEN}` }));
    shell.autoAck = true;
    await shell.waitFor('"type":"ready"');
    // At bash's prompt a megabyte heredoc takes many seconds to read; nobody wants to wait that out.
    try {
      shell.type(`cat > /dev/null <<'EOF'\r${'a line of a pasted manifest\r'.repeat(40_000)}EOF\r`);
      await new Promise((r) => setTimeout(r, 300));
      shell.type('\x03');
      await shell.waitFor('Paste stopped', 5_000);
      // What the pty had already taken (a few KiB) still reaches the shell; a second Ctrl-C
      // clears that line, as it would for the learner.
      await new Promise((r) => setTimeout(r, 500));
      shell.type('\x03');
      await new Promise((r) => setTimeout(r, 300));
      shell.type('echo STOPPED-$((5+5))\r');
      await shell.waitFor('STOPPED-10', 10_000);
    } finally {
      shell.close();
    }
  });
});

describe('static files: only regular files inside the build root', () => {
  it.each(['/.dplab-build', '/.git/config', '/%2egit/config', '/inside/../.dplab-build'])('no dotfile: %s', async (path) => {
    const r = await http(path);
    expect(r.status).toBe(404);
    expect(r.body).not.toMatch(/BUILD-STAMP|GIT-CONFIG/);
  });
  it('no symlink out of the root, to a file or a folder', async () => {
    for (const path of ['/leak.txt', '/leakdir/', '/leakdir/index.html', '/leakdir']) {
      const r = await http(path);
      expect(r.status, path).toBe(404);
      expect(r.body).not.toMatch(/OUTSIDE/);
    }
  });
  it('a symlink that stays inside is served', async () => {
    expect((await http('/alias.txt')).body).toBe('INSIDE');
  });
});

describe('page headers', () => {
  it('every page carries a CSP without framing, with the hash of its inline script, and X-Frame-Options', async () => {
    for (const path of ['/', '/nope/', '/inside/page.txt']) {
      const r = await http(path);
      const csp = String(r.headers['content-security-policy']);
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp).toMatch(/script-src 'self'/);
      expect(csp).toContain("connect-src 'self'");
      expect(csp).not.toContain("unsafe-inline' 'sha");
      expect(r.headers['x-frame-options']).toBe('DENY');
    }
    // The viewer page alone may be framed (read-only; a learner's "Follow the instructor" tab frames it).
    const viewer = await http('/watch/');
    expect(String(viewer.headers['content-security-policy'])).toContain('frame-ancestors *');
    expect(viewer.headers['x-frame-options']).toBeUndefined();
    for (const path of ['/watch', '/watch/x', '/watch/../']) {
      const r = await http(path);
      expect(r.headers['x-frame-options'], path).toBe('DENY');
    }
    const home = String((await http('/')).headers['content-security-policy']);
    // sha256 of `console.log("inline")`, the page's one inline script.
    expect(home).toContain("'sha256-");
    expect(home.match(/'sha256-/g)).toHaveLength(1);
  });
});

describe('shell cap', () => {
  it('one terminal over the cap is told why, closed with 1013, and starts no shell', async () => {
    const good = { ...pageHeaders(), authorization: `Bearer ${TOKEN}` };
    // Shells of earlier tests count until their processes are gone.
    await untilNoTerminals();
    const shells = [];
    for (let i = 0; i < MAX_TERMINALS; i++) {
      const s = mustOpen(await openShell(server.port, good));
      await s.waitFor('"type":"ready"');
      shells.push(s);
    }
    expect(server.runner.openTerminals).toBe(MAX_TERMINALS);
    const extra = mustOpen(await openShell(server.port, good));
    const closed = await new Promise<number>((resolve) => extra.ws.on('close', (code) => resolve(code)));
    expect(closed).toBe(1013);
    expect(extra.control).toEqual([{ type: 'error', message: expect.stringContaining(`the limit is ${MAX_TERMINALS}`) }]);
    expect(server.runner.openTerminals).toBe(MAX_TERMINALS);
    for (const s of shells) s.close();
    await untilNoTerminals();
    expect(server.runner.openTerminals).toBe(0);
  });
});

async function untilNoTerminals(): Promise<void> {
  const deadline = Date.now() + 5000;
  while (server.runner.openTerminals > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

describe('slow clients are cut off', () => {
  function rawConnection(): Promise<{ socket: Socket; closed: Promise<number>; said: () => string }> {
    return new Promise((resolve, reject) => {
      const t0 = Date.now();
      let text = '';
      const socket = connect(server.port, '127.0.0.1', () =>
        resolve({ socket, closed: new Promise((r) => socket.on('close', () => r(Date.now() - t0))), said: () => text }),
      );
      socket.on('error', () => undefined);
      socket.once('error', reject);
      // Read whatever the server says, so its FIN is seen and its words can be asserted.
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    });
  }
  // A browser's idle socket opened ahead of the next click: whatever the server wrote on it,
  // Chromium would show as the answer to that click (it showed "HTTP ERROR 400" before).
  it('a connection that sends nothing is closed by the server without a word', async () => {
    const { closed, said } = await rawConnection();
    const ms = await closed;
    expect(ms).toBeLessThan(LIMITS.headersMs + LIMITS.checkEveryMs + 1500);
    expect(said()).toBe('');
  });
  it("a request that started and timed out gets Node's 408, which browsers retry", async () => {
    const { socket, closed, said } = await rawConnection();
    socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n`);
    await closed;
    expect(said()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  });
  it('garbage gets a 400 and the server goes on', async () => {
    const { socket, closed, said } = await rawConnection();
    socket.write('NOT HTTP AT ALL\r\n\r\n');
    await closed;
    expect(said()).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    const res = await httpTo(`http://127.0.0.1:${server.port}`, '/');
    expect(res.status).toBeLessThan(500);
  });
  it('a client that trickles its headers is closed by the server', async () => {
    const { socket, closed } = await rawConnection();
    socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n`);
    const trickle = setInterval(() => socket.writable && socket.write('X-Slow: a\r\n'), 100);
    const ms = await closed;
    clearInterval(trickle);
    expect(ms).toBeLessThan(LIMITS.headersMs + LIMITS.checkEveryMs + 1500);
  });
  it('an open terminal is not a slow client: it outlives the request timeout', async () => {
    const shell = mustOpen(await openShell(server.port, { ...pageHeaders(), authorization: `Bearer ${TOKEN}` }));
    await shell.waitFor('"type":"ready"');
    await new Promise((r) => setTimeout(r, LIMITS.requestMs + LIMITS.checkEveryMs * 3));
    shell.type('echo ALIVE-$((3*3))\r');
    await shell.waitFor('ALIVE-9');
    shell.close();
  });
  it('at the connection limit the quietest socket makes room: the newcomer is answered, the cap holds', async () => {
    const held: Array<{ socket: Socket; closed: Promise<number> }> = [];
    try {
      for (let i = 0; i < LIMITS.maxConnections; i++) held.push(await rawConnection());
      await new Promise((r) => setTimeout(r, 100));
      const closedAt = new Map<number, number>();
      held.forEach((h, i) => void h.closed.then((ms) => closedAt.set(i, ms)));
      const t0 = Date.now();
      expect((await http('/api/health', { timeoutMs: 1000 })).status).toBe(200);
      expect(Date.now() - t0).toBeLessThan(500);
      await new Promise((r) => setTimeout(r, 100));
      // All of them sent nothing, so the oldest went, and only it.
      expect([...closedAt.keys()]).toEqual([0]);
    } finally {
      held.forEach((h) => h.socket.destroy());
      await new Promise((r) => setTimeout(r, 100));
    }
  });
});

describe('tokenless upgrades held half-open (issue 36)', () => {
  it('are closed by the server once refused, so the owner still opens a terminal past the connection cap', async () => {
    const held: Socket[] = [];
    try {
      for (let i = 0; i < LIMITS.maxConnections + 20; i++) {
        // Reads the refusal, never closes its side: a half-open socket.
        const socket = connect({ port: server.port, host: '127.0.0.1', allowHalfOpen: true });
        socket.on('error', () => undefined);
        // Answered (refused), shed to make room, or left waiting (a full server refuses nobody in words).
        const answered = new Promise((r) => {
          socket.once('data', r);
          socket.once('close', r);
          setTimeout(r, 2_000);
        });
        socket.write(
          `GET /api/terminal HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nOrigin: ${origin}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
        );
        held.push(socket);
        await answered;
      }
      // Held, they would be upgrades, never shed: every newcomer refused for as long as they are held.
      const deadline = Date.now() + 10_000;
      let opened = await openShell(server.port, { ...pageHeaders(), authorization: `Bearer ${TOKEN}` }).catch(() => null);
      while ((!opened || 'refused' in opened) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        opened = await openShell(server.port, { ...pageHeaders(), authorization: `Bearer ${TOKEN}` }).catch(() => null);
      }
      expect(opened, 'the owner could not open a terminal while the upgrades were held').not.toBeNull();
      const shell = mustOpen(opened!);
      await shell.waitFor('"type":"ready"');
      shell.close();
      await untilNoTerminals();
    } finally {
      held.forEach((s) => s.destroy());
    }
  });
});

describe('wrong-token guesses', () => {
  // Last: it leaves the runner on hold for a moment.
  it('a burst of wrong tokens earns 429 with Retry-After, while the right token always passes (issue 36), then clears', async () => {
    // All at once, as a guesser sends them: one after another on a busy machine, each took longer
    // than the bucket's leak (500 ms), and the last ones were compared again (401 where 429 was due).
    const statuses = await Promise.all(
      Array.from({ length: GUESS_LIMIT.burst + 3 }, (_, i) =>
        http('/api/session', { headers: { authorization: `Bearer guess-${i}` } }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 401)).toHaveLength(GUESS_LIMIT.burst);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    const held = await http('/api/session', { headers: { authorization: `Bearer guess-more` } });
    expect(held.status).toBe(429);
    expect(Number(held.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(held.body).error.message).toMatch(/Too many wrong tokens/);
    // The owner, meanwhile: their calls and their terminal work (another seat's learner cannot lock them out).
    expect((await http('/api/session', { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    const shell = mustOpen(await openShell(server.port, { ...pageHeaders(), authorization: `Bearer ${TOKEN}` }));
    await shell.waitFor('"type":"ready"');
    shell.close();
    await untilNoTerminals();
    // The open route and pages never wait.
    expect((await http('/api/health')).status).toBe(200);
    await new Promise((r) => setTimeout(r, GUESS_LIMIT.leakMs * 2 + 50));
    expect((await http('/api/session', { headers: { authorization: `Bearer guess-after` } })).status).toBe(401);
  });
});

describe('HOST=0.0.0.0 and --allow-host', () => {
  it('prints a link that answers, and answers to allowed names only', async () => {
    const site = mkdtempSync(join(tmpdir(), 'dplab-site-'));
    writeFileSync(join(site, 'index.html'), '<h1>wild</h1>');
    const wild = await startServer({
      host: '0.0.0.0',
      port: 0,
      portExplicit: true,
      token: TOKEN,
      siteDir: site,
      allowHosts: ['lab.example'],
    });
    try {
      const link = new URL(wild.url);
      expect(link.hostname).not.toBe('0.0.0.0');
      expect(link.hash).toBe(`#token=${TOKEN}`);
      const page = await httpTo(link.origin, '/');
      expect(page.status).toBe(200);
      expect(page.body).toContain('wild');
      const withToken = await httpTo(link.origin, '/api/session', { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(withToken.status).toBe(200);
      const loop = `http://127.0.0.1:${wild.port}`;
      expect((await httpTo(loop, '/', { headers: { host: `lab.example:${wild.port}` } })).status).toBe(200);
      expect((await httpTo(loop, '/', { headers: { host: `other.example:${wild.port}` } })).status).toBe(403);
      expect((await httpTo(loop, '/', { headers: { host: `0.0.0.0:${wild.port}` } })).status).toBe(403);
    } finally {
      await wild.close();
    }
  });
  it('refuses a DPLAB_TOKEN under 128 bits', async () => {
    await expect(startServer({ port: 0, portExplicit: true, token: 'short', siteDir: outside })).rejects.toThrow(/too short/);
  });
});
