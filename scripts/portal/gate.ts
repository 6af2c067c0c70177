/**
 * The portal's half of the security contract. Every request proves where it was sent (Host:
 * the portal's own name, no DNS rebinding), where it came from (Origin, for upgrades and
 * state-changing requests, compared as whole strings), and who is asking: the instructor's
 * token, or a learner token, which names exactly one seat. The seat is chosen by the token
 * alone; no id a learner sends ever picks one.
 */
import { createHash } from 'node:crypto';
import { hostAllowed, requestToken, tokensEqual } from '../server/security.ts';
import { GuessLimiters } from '../server/guess-limit.ts';

export interface PortalAddress {
  /** Host header values we answer to. */
  hosts: Set<string>;
  /** Origins we accept: http for loopback, https for the public name behind TLS. */
  origins: Set<string>;
}

/**
 * Loopback names with our port over http; with `behindTls`, each public name (as the TLS
 * terminator forwards it in Host, with or without a port) over https.
 */
export function portalAddress(port: number, opts: { publicHosts?: readonly string[]; behindTls?: boolean } = {}): PortalAddress {
  const hosts = new Set<string>();
  const origins = new Set<string>();
  for (const name of ['127.0.0.1', 'localhost', '[::1]']) {
    const h = `${name}:${port}`.toLowerCase();
    hosts.add(h);
    origins.add(`http://${h}`);
  }
  if (opts.behindTls) {
    for (const name of opts.publicHosts ?? []) {
      const h = name.toLowerCase();
      hosts.add(h);
      origins.add(`https://${h}`);
      // A terminator may also pass the public port along.
      if (!h.includes(':')) hosts.add(`${h}:443`);
    }
  }
  return { hosts, origins };
}

export type PortalVerdict = { ok: true } | { ok: false; status: 401 | 403 | 429; message: string; retryAfterSeconds?: number };

/** Host and Origin, before any token is looked at. */
export function checkAddress(
  input: { method: string; host?: string; origin?: string; isUpgrade: boolean },
  address: PortalAddress,
): PortalVerdict {
  if (!hostAllowed(input.host, address.hosts))
    return { ok: false, status: 403, message: `This portal does not answer to "${(input.host ?? '').slice(0, 100)}".` };
  const safe = input.method === 'GET' || input.method === 'HEAD';
  if ((input.isUpgrade || !safe) && (input.origin === undefined || !address.origins.has(input.origin)))
    return { ok: false, status: 403, message: `Cross-origin request refused (Origin "${(input.origin ?? 'missing').slice(0, 100)}").` };
  return { ok: true };
}

/** Learner tokens are kept by their SHA-256: a lookup compares digests, never the token itself. */
function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export type Principal = { kind: 'instructor' } | { kind: 'learner'; seat: string };

/**
 * Who holds which token, with a guess limiter per client (client-source.ts): the right token
 * always passes; a client whose wrong tokens fill its bucket gets 429 for its wrong ones, and
 * nobody else waits (issue 36: ~25 wrong tokens a second put the whole class on 429).
 */
export class TokenBook {
  readonly #learners = new Map<string, string>();
  readonly guesses: GuessLimiters;

  constructor(
    private readonly instructorToken: string,
    guesses = new GuessLimiters(),
  ) {
    this.guesses = guesses;
  }

  addLearner(token: string, seat: string): void {
    this.#learners.set(tokenKey(token), seat);
  }

  removeSeat(seat: string): void {
    for (const [k, s] of this.#learners) if (s === seat) this.#learners.delete(k);
  }

  /** Seats that have a learner token (a restarted portal's book is filled from the seats it adopts). */
  seatOf(token: string): string | undefined {
    return this.#learners.get(tokenKey(token));
  }

  /** The principal a request's token names; 401 for none or an unknown one, 429 for a wrong one while its client (`source`) is on hold. */
  identify(
    req: {
      headers: Record<string, string | string[] | undefined>;
    },
    source: () => string = () => 'any',
  ): { ok: true; who: Principal } | Extract<PortalVerdict, { ok: false }> {
    const given = requestToken(req as Parameters<typeof requestToken>[0]);
    if (given === undefined) return { ok: false, status: 401, message: 'This needs a token: join the workshop from its link first.' };
    if (tokensEqual(given, this.instructorToken)) return { ok: true, who: { kind: 'instructor' } };
    const seat = this.#learners.get(tokenKey(given));
    if (seat !== undefined) return { ok: true, who: { kind: 'learner', seat } };
    // Who is asking matters only for a wrong token (and costs a read of /proc/net/tcp on loopback).
    const from = source();
    const wait = this.guesses.blockedFor(from);
    if (wait > 0) return { ok: false, status: 429, message: `Too many wrong tokens; try again in ${wait} s.`, retryAfterSeconds: wait };
    this.guesses.wrongGuess(from);
    return { ok: false, status: 401, message: 'Unknown or expired token. Join the workshop again from its link.' };
  }
}
