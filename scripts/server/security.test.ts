import { describe, expect, it } from 'vitest';
import { allowedHosts, gate, generateToken, hostAllowed, originAllowed, requestToken, tokensEqual, weakTokenReason } from './security.ts';
import { GuessLimiter } from './guess-limit.ts';

const PORT = 4321;
const hosts = allowedHosts(PORT);
const ok = { method: 'GET', host: '127.0.0.1:4321', origin: undefined, token: 'T0k3n', isUpgrade: false, needsToken: true };

describe('token', () => {
  it('generates distinct url-safe tokens of enough entropy', () => {
    const a = generateToken();
    const b = generateToken();
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });
  it('compares exactly, refusing prefixes, empties and non-strings', () => {
    expect(tokensEqual('abc', 'abc')).toBe(true);
    expect(tokensEqual('ab', 'abc')).toBe(false);
    expect(tokensEqual('abcd', 'abc')).toBe(false);
    expect(tokensEqual('', '')).toBe(false);
    expect(tokensEqual(undefined, 'abc')).toBe(false);
    expect(tokensEqual('ABC', 'abc')).toBe(false);
  });
  it('reads the bearer header or the token subprotocol, never a cookie or the query', () => {
    expect(requestToken({ headers: { authorization: 'Bearer xyz' } })).toBe('xyz');
    expect(requestToken({ headers: { 'sec-websocket-protocol': 'dplab.v1, dplab.token.abc' } })).toBe('abc');
    expect(requestToken({ headers: { authorization: 'Bearer xyz', 'sec-websocket-protocol': 'dplab.token.abc' } })).toBe('xyz');
    expect(requestToken({ headers: { cookie: 'dplab_token_4321=abc' } })).toBeUndefined();
    expect(requestToken({ headers: { 'sec-websocket-protocol': 'dplab.v1' } })).toBeUndefined();
    expect(requestToken({ headers: { authorization: 'Basic xyz' } })).toBeUndefined();
  });
  it('refuses a chosen token under 128 bits, accepts generated and long ones', () => {
    expect(weakTokenReason('x')).toMatch(/too short/);
    expect(weakTokenReason('0123456789abcdef0123456789abcde')).toMatch(/too short/); // 31 hex digits: 124 bits
    expect(weakTokenReason('0123456789abcdef0123456789abcdef')).toBeNull(); // 32 hex digits
    expect(weakTokenReason('A'.repeat(21) + '_')).toBeNull(); // 22 base64url characters: 132 bits
    expect(weakTokenReason('Abc_-'.repeat(4))).toMatch(/too short/);
    expect(weakTokenReason('has space '.repeat(4))).toMatch(/only use/);
    expect(weakTokenReason(generateToken())).toBeNull();
  });
});

describe('wrong-token guesses', () => {
  it('allows a burst, then holds every token check, then lets one through per leak period', () => {
    let t = 0;
    const g = new GuessLimiter(3, 500, () => t);
    for (let i = 0; i < 3; i++) {
      expect(g.blockedFor()).toBe(0);
      g.wrongGuess();
    }
    expect(g.blockedFor()).toBeGreaterThan(0);
    t += 499;
    expect(g.blockedFor()).toBeGreaterThan(0);
    t += 2;
    expect(g.blockedFor()).toBe(0);
    g.wrongGuess();
    expect(g.blockedFor()).toBeGreaterThan(0);
    t += 10_000;
    expect(g.blockedFor()).toBe(0);
  });
});

describe('Host allow-list (DNS rebinding)', () => {
  it.each(['127.0.0.1:4321', 'localhost:4321', '[::1]:4321', 'LOCALHOST:4321'])('accepts %s', (h) =>
    expect(hostAllowed(h, hosts)).toBe(true),
  );
  it.each([
    'evil.example:4321',
    '127.0.0.1:4322',
    '127.0.0.1',
    'localhost',
    'localhost.evil.com:4321',
    '127.0.0.1.nip.io:4321',
    'evil.com',
    '',
    'localhost:4321 ',
  ])('refuses %j', (h) => expect(hostAllowed(h, hosts)).toBe(false));
  it('refuses a missing Host', () => expect(hostAllowed(undefined, hosts)).toBe(false));
  it('adds the bound address for a classroom, but never a wildcard', () => {
    expect(hostAllowed('192.168.1.20:4321', allowedHosts(PORT, ['192.168.1.20']))).toBe(true);
    expect(hostAllowed('0.0.0.0:4321', allowedHosts(PORT, ['0.0.0.0']))).toBe(false);
  });
});

describe('Origin', () => {
  it('must equal our own origin as a whole string', () => {
    expect(originAllowed('http://127.0.0.1:4321', '127.0.0.1:4321', hosts)).toBe(true);
    expect(originAllowed('http://localhost:4321', 'localhost:4321', hosts)).toBe(true);
  });
  it.each([
    ['http://evil.com', '127.0.0.1:4321'],
    ['http://127.0.0.1:4321.evil.com', '127.0.0.1:4321'],
    ['http://127.0.0.1:43210', '127.0.0.1:4321'],
    ['https://127.0.0.1:4321', '127.0.0.1:4321'],
    ['http://127.0.0.1:4321/', '127.0.0.1:4321'],
    ['null', '127.0.0.1:4321'],
    ['http://localhost:4321', '127.0.0.1:4321'],
    ['http://evil.example:4321', 'evil.example:4321'],
  ])('refuses Origin %s for Host %s', (o, h) => expect(originAllowed(o, h, hosts)).toBe(false));
  it('refuses a missing Origin', () => expect(originAllowed(undefined, '127.0.0.1:4321', hosts)).toBe(false));
});

describe('gate', () => {
  it('lets a signed-in GET through', () => expect(gate(ok, 'T0k3n', hosts)).toEqual({ ok: true }));
  it('401 without or with a wrong token', () => {
    expect(gate({ ...ok, token: undefined }, 'T0k3n', hosts)).toMatchObject({ ok: false, status: 401 });
    expect(gate({ ...ok, token: 'nope' }, 'T0k3n', hosts)).toMatchObject({ ok: false, status: 401 });
  });
  it('403 for a foreign Host even with the token', () =>
    expect(gate({ ...ok, host: 'evil.example:4321' }, 'T0k3n', hosts)).toMatchObject({ ok: false, status: 403 }));
  it('403 for an upgrade or POST without our Origin, even with the token', () => {
    expect(gate({ ...ok, isUpgrade: true }, 'T0k3n', hosts)).toMatchObject({ ok: false, status: 403 });
    expect(gate({ ...ok, method: 'POST', origin: 'http://evil.example' }, 'T0k3n', hosts)).toMatchObject({ ok: false, status: 403 });
    expect(gate({ ...ok, method: 'DELETE', origin: 'http://127.0.0.1:4321' }, 'T0k3n', hosts)).toEqual({ ok: true });
  });
  it('the viewer token passes only where the input allows it (the watch socket), never as the runner token', () => {
    const watch = { ...ok, token: 'V13w3r', isUpgrade: true, origin: 'http://127.0.0.1:4321', viewerAllowed: true };
    expect(gate(watch, 'T0k3n', hosts, 'V13w3r')).toEqual({ ok: true });
    expect(gate({ ...watch, viewerAllowed: false }, 'T0k3n', hosts, 'V13w3r')).toMatchObject({ ok: false, status: 401 });
    expect(gate({ ...watch, viewerAllowed: undefined }, 'T0k3n', hosts, 'V13w3r')).toMatchObject({ ok: false, status: 401 });
    expect(gate({ ...ok, token: 'V13w3r', method: 'POST', origin: 'http://127.0.0.1:4321' }, 'T0k3n', hosts, 'V13w3r')).toMatchObject({
      ok: false,
      status: 401,
    });
    // Still Host and Origin first.
    expect(gate({ ...watch, origin: 'http://evil.example' }, 'T0k3n', hosts, 'V13w3r')).toMatchObject({ ok: false, status: 403 });
    expect(gate({ ...watch, token: 'T0k3n' }, 'T0k3n', hosts, 'V13w3r')).toEqual({ ok: true });
  });
  it('the open route still needs our Host', () => {
    expect(gate({ ...ok, token: undefined, needsToken: false }, 'T0k3n', hosts)).toEqual({ ok: true });
    expect(gate({ ...ok, token: undefined, needsToken: false, host: 'evil.example:4321' }, 'T0k3n', hosts)).toMatchObject({ ok: false });
  });
});
