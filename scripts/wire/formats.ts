/** The rule-dump formats the parsers read, as the wire names them. Plain data, no zod (`dplab help` lists them). */
export const FORMATS = ['iptables-save', 'nft-json', 'ipvsadm', 'proc-ip-vs', 'cilium', 'cilium-json'] as const;
export type Format = (typeof FORMATS)[number];
