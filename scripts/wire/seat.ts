/** A seat's id, as the portal, the runner (DPLAB_SEAT) and both seat backends read it. */

/** Seat ids name clusters, folders and Kubernetes objects, so they are DNS-label safe (≤ 20 characters). */
export const SEAT_ID_PATTERN = /^[a-z0-9]([a-z0-9-]{0,18}[a-z0-9])?$/;

export function isSeatId(value: unknown): value is string {
  return typeof value === 'string' && SEAT_ID_PATTERN.test(value);
}
