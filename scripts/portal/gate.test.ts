/** The portal's gate: Host and Origin first, then who the token names; guesses are held off. */
import { describe, expect, it } from 'vitest';
import { GuessLimiters } from '../server/guess-limit.ts';
import { checkAddress, portalAddress, TokenBook } from './gate.ts';

const INSTRUCTOR = 'instructor-token-0123456789abcdef';
const A = 'learner-a-token-0123456789abcdef';
const B = 'learner-b-token-0123456789abcdef';
const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });

describe('address', () => {
  const local = portalAddress(4400);
  const tls = portalAddress(4400, { behindTls: true, publicHosts: ['lab.example.org'] });

  it('answers to its loopback names and port only', () => {
    expect(checkAddress({ method: 'GET', host: '127.0.0.1:4400', isUpgrade: false }, local).ok).toBe(true);
    expect(checkAddress({ method: 'GET', host: 'localhost:4400', isUpgrade: false }, local).ok).toBe(true);
    for (const host of ['127.0.0.1:4401', 'evil.example:4400', 'lab.example.org', undefined])
      expect(checkAddress({ method: 'GET', host, isUpgrade: false }, local)).toMatchObject({ ok: false, status: 403 });
  });
  it('wants its own origin, as a whole string, on upgrades and state changes', () => {
    const ok = { method: 'POST', host: '127.0.0.1:4400', isUpgrade: false };
    expect(checkAddress({ ...ok, origin: 'http://127.0.0.1:4400' }, local).ok).toBe(true);
    for (const origin of [undefined, 'null', 'http://127.0.0.1:4400.evil', 'http://evil.example', 'https://127.0.0.1:4400'])
      expect(checkAddress({ ...ok, origin }, local)).toMatchObject({ ok: false, status: 403 });
    expect(checkAddress({ method: 'GET', host: '127.0.0.1:4400', isUpgrade: true, origin: 'http://evil.example' }, local).ok).toBe(false);
  });
  it('behind TLS accepts the public name with an https origin, never an http one', () => {
    expect(checkAddress({ method: 'POST', host: 'lab.example.org', origin: 'https://lab.example.org', isUpgrade: false }, tls).ok).toBe(
      true,
    );
    expect(checkAddress({ method: 'GET', host: 'lab.example.org:443', isUpgrade: false }, tls).ok).toBe(true);
    expect(checkAddress({ method: 'POST', host: 'lab.example.org', origin: 'http://lab.example.org', isUpgrade: false }, tls).ok).toBe(
      false,
    );
    expect(checkAddress({ method: 'GET', host: 'other.example.org', isUpgrade: false }, tls).ok).toBe(false);
  });
  it('without --behind-tls a public name is not ours', () => {
    const plain = portalAddress(4400, { publicHosts: ['lab.example.org'] });
    expect(checkAddress({ method: 'GET', host: 'lab.example.org', isUpgrade: false }, plain).ok).toBe(false);
  });
});

describe('tokens', () => {
  it('a learner token names its own seat, the instructor token the instructor, anything else is 401', () => {
    const book = new TokenBook(INSTRUCTOR);
    book.addLearner(A, 's01');
    book.addLearner(B, 's02');
    expect(book.identify(bearer(A))).toEqual({ ok: true, who: { kind: 'learner', seat: 's01' } });
    expect(book.identify(bearer(B))).toEqual({ ok: true, who: { kind: 'learner', seat: 's02' } });
    expect(book.identify(bearer(INSTRUCTOR))).toEqual({ ok: true, who: { kind: 'instructor' } });
    expect(book.identify(bearer('s01'))).toMatchObject({ ok: false, status: 401 });
    expect(book.identify({ headers: {} })).toMatchObject({ ok: false, status: 401 });
    // The terminal socket's subprotocol carries it the same way.
    expect(book.identify({ headers: { 'sec-websocket-protocol': `dplab.v1, dplab.token.${B}` } })).toEqual({
      ok: true,
      who: { kind: 'learner', seat: 's02' },
    });
  });
  it('an ended seat’s tokens stop working', () => {
    const book = new TokenBook(INSTRUCTOR);
    book.addLearner(A, 's01');
    book.removeSeat('s01');
    expect(book.identify(bearer(A))).toMatchObject({ ok: false, status: 401 });
  });
  it("a stream of wrong tokens holds that client's wrong ones, never a right token nor another client, until it drains", () => {
    let now = 0;
    const book = new TokenBook(INSTRUCTOR, new GuessLimiters(5, 1000, 100, () => now));
    book.addLearner(A, 's01');
    const statuses = Array.from(
      { length: 7 },
      (_, i) => (book.identify(bearer(`guess-${i}`), () => 'mallory') as { status: number }).status,
    );
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    // The right token passes from anywhere, the guesser's own address included.
    expect(book.identify(bearer(A), () => 'mallory')).toEqual({ ok: true, who: { kind: 'learner', seat: 's01' } });
    expect(book.identify(bearer(INSTRUCTOR), () => 'mallory')).toEqual({ ok: true, who: { kind: 'instructor' } });
    // Another client's mistake is a plain 401.
    expect(book.identify(bearer('typo'), () => 'alice')).toMatchObject({ ok: false, status: 401 });
    now += 2_000;
    expect(book.identify(bearer('guess-8'), () => 'mallory')).toMatchObject({ ok: false, status: 401 });
  });
});
