// Draws one Service's path as a mermaid flowchart: the chain walk (iptables), the map lookup
// (nftables), the virtual server (IPVS) or the socket-level choice (Cilium), ending at each pod.
// A kube-proxy external chain (NodePort, external and load-balancer IPs) gets its other rules as
// dotted branches: the masquerade mark, and under Local the pod and node short-circuits.
import type { ExternalRule, Format, ServiceView } from './model.ts';
import { hostPort } from './addr.ts';
import { externalRuleTraffic } from './text.ts';

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
/** Formats where a frontend without a local backend refuses the connection (Cilium's serviceNoBackendResponse default, reject) instead of dropping it. */
const REFUSES_WITHOUT_LOCAL: ReadonlySet<Format> = new Set(['cilium', 'cilium-json']);

/** Where a side rule of an external chain leads, as the diagram labels that box. */
function sideTarget(r: ExternalRule): string {
  return r.action === 'masquerade' ? `${r.target}: marked for SNAT on the way out` : `${r.target}: every endpoint (Cluster policy)`;
}

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
  // Top to bottom: a chain of hops stays one column wide, so two paths fit side by side (the explorer).
  const lines = ['flowchart TB'];
  let next = 0;
  const node = (label: string, shape: 'box' | 'round' = 'box') => {
    const id = `n${next++}`;
    const text = `"${escapeLabel(label)}"`;
    lines.push(`  ${id}${shape === 'round' ? `(${text})` : `[${text}]`}`);
    return id;
  };
  const edge = (from: string, to: string, label?: string) =>
    lines.push(label ? `  ${from} -- "${escapeLabel(label)}" --> ${to}` : `  ${from} --> ${to}`);
  /**
   * The external chain's rules beside the path, as dotted edges: the masquerade mark and the
   * short-circuits of pod and node traffic to the Cluster chain. Returns the label for the path's
   * next edge when some traffic left it here ("everyone else").
   */
  const drawExternal = (chain: string, rules: ExternalRule[]): string | undefined => {
    const boxes = new Map<string, string>();
    for (const r of rules) {
      const label = sideTarget(r);
      let box = boxes.get(label);
      if (!box) {
        box = node(label);
        boxes.set(label, box);
      }
      lines.push(`  ${chain} -. "${escapeLabel(externalRuleTraffic(r))}" .-> ${box}`);
    }
    const left = rules.filter((r) => r.action === 'jump').map((r) => r.traffic);
    if (left.includes('all')) return undefined;
    return left.length ? 'every other source: clients outside the cluster' : undefined;
  };

  for (const fe of view.frontends) {
    const title = `${ENTRY_LABEL[format]} ${hostPort(fe.ip, fe.port)}/${fe.protocol} (${fe.type === 'unknown' ? 'type unknown' : fe.type}${view.service ? ` ${view.service}` : ''})`;
    let last = node(title, 'round');
    /** The label of the edge out of the external chain along the path: who is left after its side rules. */
    let onward: string | undefined;
    for (const hop of fe.path) {
      const id = node(hop);
      edge(last, id, onward);
      onward = undefined;
      last = id;
      if (fe.external?.chain === hop && fe.external.rules.length) onward = drawExternal(id, fe.external.rules);
    }
    if (fe.backends.length === 0) {
      const why = fe.dropsWithoutLocalEndpoints
        ? REFUSES_WITHOUT_LOCAL.has(format)
          ? "refused: no local backend on this node (Cilium's default reply)"
          : 'dropped: no local endpoint on this node'
        : fe.noBackendVerdict === 'reject'
          ? 'rejected: no endpoints'
          : 'no backend';
      edge(last, node(why, 'round'), onward);
      continue;
    }
    for (const b of fe.backends) {
      const share = `${onward ? `${onward}; ` : ''}${(b.share * 100).toFixed(PERCENT_DIGITS)}%${b.detail ? ` (${b.detail})` : ''}`;
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
