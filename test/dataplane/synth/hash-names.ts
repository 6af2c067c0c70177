// kube-proxy names its chains after a hash of the Service port (and endpoint), so the synth output
// carries the same names a real node would for the same Service.
import { createHash } from 'node:crypto';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

function hash(text: string): string {
  return base32(createHash('sha256').update(text).digest());
}

const IPTABLES_HASH_LENGTH = 16;
const NFT_HASH_LENGTH = 8;

/** iptables mode: KUBE-SVC-/KUBE-EXT-/KUBE-SVL-/KUBE-FW- + hash(servicePortName + protocol). */
export function iptablesServiceHash(servicePortName: string, protocol: string): string {
  return hash(servicePortName + protocol).slice(0, IPTABLES_HASH_LENGTH);
}

/** iptables mode: KUBE-SEP- + hash(servicePortName + protocol + "ip:port"). */
export function iptablesEndpointHash(servicePortName: string, protocol: string, endpoint: string): string {
  return hash(servicePortName + protocol + endpoint).slice(0, IPTABLES_HASH_LENGTH);
}

/** nftables mode: "HASH-ns/name/proto/port" (and "__ip/port" for endpoints), hash of the rest. */
export function nftNameBase(name: string): string {
  return `${hash(name).slice(0, NFT_HASH_LENGTH)}-${name}`;
}
