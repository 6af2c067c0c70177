/**
 * What every part of the portal's server asks first: who is this (the gate, gate.ts, with the
 * client's own guess limit), and the workshop the answer comes from. One `PortalDoor` a portal;
 * its address changes once, when the portal knows its port.
 */
import type { IncomingMessage } from 'node:http';
import { clientSource } from './client-source.ts';
import { checkAddress, type PortalAddress, type PortalVerdict, type Principal, type TokenBook } from './gate.ts';
import type { Workshop } from './workshop.ts';

type Refusal = Extract<PortalVerdict, { ok: false }>;

export interface PortalDoor {
  /** The names and origins the portal answers to, as they are now (gate.ts `checkAddress` reads them). */
  address(): PortalAddress;
  /** Host, Origin, then the token: the instructor, a learner's seat, or a refusal. */
  identify(req: IncomingMessage, isUpgrade: boolean): { ok: true; who: Principal } | Refusal;
  /** The workshop, there once the portal listens (no request is answered before). */
  workshop(): Workshop;
  /** TLS is terminated in front of the portal (client-source.ts reads the forwarded address). */
  readonly behindTls: boolean;
}

export function portalDoor(tokens: TokenBook, behindTls: boolean, now: { address(): PortalAddress; workshop(): Workshop }): PortalDoor {
  return {
    address: now.address,
    identify(req, isUpgrade) {
      const where = checkAddress(
        { method: req.method ?? 'GET', host: req.headers.host, origin: req.headers.origin, isUpgrade },
        now.address(),
      );
      if (!where.ok) return where;
      return tokens.identify(req, () => clientSource(req, behindTls).key);
    },
    workshop: now.workshop,
    behindTls,
  };
}
