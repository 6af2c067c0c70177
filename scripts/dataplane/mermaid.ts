// Draws one Service's path as a mermaid flowchart: the chain walk (iptables), the map lookup
// (nftables), the virtual server (IPVS) or the socket-level choice (Cilium), ending at each pod.
import type { Format, ServiceView } from './model.ts';
import { hostPort } from './addr.ts';

const ENTRY_LABEL: Record<Format, string> = {
  'iptables-save': 'packet to',
  'nft-json': 'packet to',
  ipvsadm: 'packet to virtual server',
  'proc-ip-vs': 'packet to virtual server',
  cilium: 'connect() to',
  'cilium-json': 'connect() to',
};
const FINAL_STEP: Record<Format, string> = {
  'iptables-save': 'DNAT to pod',
  'nft-json': 'dnat to pod',
  ipvsadm: 'real server',
  'proc-ip-vs': 'real server',
  cilium: 'socket connected to backend',
  'cilium-json': 'socket connected to backend',
};
const PERCENT_DIGITS = 1;

/** Mermaid reads #name; entities inside quoted labels; quotes and angle brackets must not appear raw. */
export function escapeLabel(text: string): string {
  return text
    .replace(/&/g, '#amp;')
    .replace(/"/g, '#quot;')
    .replace(/</g, '#lt;')
    .replace(/>/g, '#gt;')
    .replace(/[\r\n]+/g, ' ');
}

export function toMermaid(view: ServiceView, format: Format): string {
  const lines = ['flowchart LR'];
  let next = 0;
  const node = (label: string, shape: 'box' | 'round' = 'box') => {
    const id = `n${next++}`;
    const text = `"${escapeLabel(label)}"`;
    lines.push(`  ${id}${shape === 'round' ? `(${text})` : `[${text}]`}`);
    return id;
  };
  const edge = (from: string, to: string, label?: string) =>
    lines.push(label ? `  ${from} -- "${escapeLabel(label)}" --> ${to}` : `  ${from} --> ${to}`);

  for (const fe of view.frontends) {
    const title = `${ENTRY_LABEL[format]} ${hostPort(fe.ip, fe.port)}/${fe.protocol} (${fe.type === 'unknown' ? 'type unknown' : fe.type}${view.service ? ` ${view.service}` : ''})`;
    let last = node(title, 'round');
    for (const hop of fe.path) {
      const id = node(hop);
      edge(last, id);
      last = id;
    }
    if (fe.backends.length === 0) {
      const why = fe.dropsWithoutLocalEndpoints
        ? 'dropped: no local endpoint on this node'
        : fe.noBackendVerdict === 'reject'
          ? 'rejected: no endpoints'
          : 'no backend';
      edge(last, node(why, 'round'));
      continue;
    }
    for (const b of fe.backends) {
      const share = `${(b.share * 100).toFixed(PERCENT_DIGITS)}%${b.detail ? ` (${b.detail})` : ''}`;
      const target = node(`${FINAL_STEP[format]} ${hostPort(b.ip, b.port)}`, 'round');
      if (b.via && !fe.path.includes(b.via)) {
        const via = node(b.via);
        edge(last, via, `${fe.chooser}: ${share}`);
        edge(via, target);
      } else {
        edge(last, target, `${fe.chooser}: ${share}`);
      }
    }
    if (fe.affinity) lines.push(`  %% session affinity: ${fe.affinity.timeoutSeconds}s`);
  }
  return `${lines.join('\n')}\n`;
}
