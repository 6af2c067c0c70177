// Draws one Service's path as a mermaid flowchart: the chain walk (iptables), the map lookup
// (nftables), the virtual server (IPVS) or the socket-level choice (Cilium), ending at each pod.
// A kube-proxy external chain (NodePort, external and load-balancer IPs) gets its other rules as
// dotted branches: the masquerade mark, and under Local the pod and node short-circuits.
//
// Drawn narrow on purpose, so a path fits a phone's column, or one of the explorer's two, with
// its labels at 12 px: every label is broken into short lines (chain names at their dashes and
// slashes), a frontend's backends are stacked in one box under the choice that picks them rather
// than fanned out side by side, and a Service's frontends are stacked one under the other.
import type { ExternalRule, Format, ServiceView } from './model.ts';
import { hostPort } from './addr.ts';
import { externalRuleTraffic, WITHOUT_LOCAL_BACKEND } from './text.ts';

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
/** The longest line of a label, in characters: at mermaid's 16 px about 190 px wide. */
export const LABEL_LINE_CHARS = 24;

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

/**
 * `text` as lines of at most `max` characters: broken at spaces, and a word longer than a line
 * (a chain name such as KUBE-SEP-PXJ2U7QYT2QW5545, an nftables chain with a Service's name in it)
 * after its dashes, slashes, underscores and colons, or, with none left, at `max` itself.
 */
export function wrapLabel(text: string, max = LABEL_LINE_CHARS): string[] {
  const pieces = text
    .split(/\s+/)
    .filter(Boolean)
    .flatMap((word, i) => {
      const parts = word.length <= max ? [word] : (word.match(/[^-/_:]*[-/_:]*/g) ?? [word]).filter(Boolean);
      const cut = parts.flatMap((p) => p.match(new RegExp(`.{1,${max}}`, 'g')) ?? []);
      // A space before each word but the first; none between the parts of one word.
      return cut.map((p, j) => ({ text: p, space: i > 0 && j === 0 }));
    });
  const lines: string[] = [];
  for (const p of pieces) {
    const last = lines.length ? lines[lines.length - 1] : undefined;
    const joined = last === undefined ? undefined : `${last}${p.space ? ' ' : ''}${p.text}`;
    if (joined !== undefined && joined.length <= max) lines[lines.length - 1] = joined;
    else lines.push(p.text);
  }
  return lines;
}

/** A quoted mermaid label: each part on its own line(s), wrapped. */
function label(parts: string | readonly string[]): string {
  const lines = (typeof parts === 'string' ? [parts] : parts).flatMap((p) => wrapLabel(p));
  return `"${lines.map(escapeLabel).join('<br/>')}"`;
}

export function toMermaid(view: ServiceView, format: Format): string {
  const lines = ['flowchart TB'];
  let next = 0;
  let boxes = 0;
  const node = (text: string | readonly string[], shape: 'box' | 'round' = 'box') => {
    const id = `n${next++}`;
    lines.push(`  ${id}${shape === 'round' ? `(${label(text)})` : `[${label(text)}]`}`);
    return id;
  };
  const edge = (from: string, to: string, text?: string | readonly string[]) =>
    lines.push(text ? `  ${from} -- ${label(text)} --> ${to}` : `  ${from} --> ${to}`);
  /** Puts `below` under `above` without a drawn line: the stacking of backends and of frontends. */
  const under = (above: string, below: string) => lines.push(`  ${above} ~~~ ${below}`);
  /**
   * The external chain's rules before its last jump, under it in the path, in the chain's order,
   * joined by dotted edges (the masquerade mark, and the short-circuits of pod and node traffic
   * to the Cluster chain): what falls through them goes on. Returns the last rule's box, and the
   * label for the path's next edge when some traffic left it here ("everyone else").
   */
  const drawExternal = (chain: string, rules: ExternalRule[]): { last: string; onward?: string } => {
    let last = chain;
    rules.forEach((r, i) => {
      const id = node([`${externalRuleTraffic(r)}:`, sideTarget(r)]);
      lines.push(i === 0 ? `  ${last} -. ${label('its rules, in order')} .-> ${id}` : `  ${last} -.-> ${id}`);
      last = id;
    });
    const left = rules.filter((r) => r.action === 'jump').map((r) => r.traffic);
    if (left.includes('all')) return { last };
    return { last, onward: left.length ? 'every other source: clients outside the cluster' : undefined };
  };

  /** The previous frontend's box, so the next one is drawn under it. */
  let previous: string | undefined;
  for (const fe of view.frontends) {
    // Each frontend in a box of its own, drawn without a frame: stacked as wholes, a path that
    // takes a side branch does not push the next one sideways.
    const frame = `f${boxes++}`;
    lines.push(`  subgraph ${frame} [" "]`, '    direction TB');
    const title = node(
      [
        `${ENTRY_LABEL[format]} ${hostPort(fe.ip, fe.port)}/${fe.protocol}`,
        `(${fe.type === 'unknown' ? 'type unknown' : fe.type}${view.service ? ` ${view.service}` : ''})`,
      ],
      'round',
    );
    const endFrame = () => {
      lines.push('  end', `  style ${frame} fill:none,stroke:none`);
      if (previous) under(previous, frame);
      previous = frame;
    };
    let last = title;
    /** The label of the edge out of the external chain along the path: who is left after its side rules. */
    let onward: string | undefined;
    for (const hop of fe.path) {
      const id = node(hop);
      edge(last, id, onward);
      onward = undefined;
      last = id;
      if (fe.external?.chain === hop && fe.external.rules.length) ({ last, onward } = drawExternal(id, fe.external.rules));
    }
    if (fe.backends.length === 0) {
      const why = fe.dropsWithoutLocalEndpoints
        ? WITHOUT_LOCAL_BACKEND[format] === 'refuses'
          ? "refused: no local backend on this node (Cilium's default reply)"
          : 'dropped: no local endpoint on this node'
        : fe.noBackendVerdict === 'reject'
          ? 'rejected: no endpoints'
          : 'no backend';
      edge(last, node(why, 'round'), onward);
      endFrame();
      continue;
    }
    // The backends one under the other in one box, which the edge naming the choice leads to;
    // each with its share on its first line and how the rules give it that share on the next.
    const box = `b${boxes++}`;
    // (Untitled: mermaid draws a title of more than one line over the box's first node.)
    lines.push(`  subgraph ${box} [" "]`, '    direction TB');
    let above: string | undefined;
    for (const b of fe.backends) {
      const share = [`${(b.share * 100).toFixed(PERCENT_DIGITS)}%`, ...(b.detail ? [b.detail] : [])];
      const finalStep = `${FINAL_STEP[format]} ${hostPort(b.ip, b.port)}`;
      const via = b.via && !fe.path.includes(b.via) ? node([...share, b.via]) : undefined;
      const target = node(via ? finalStep : [...share, finalStep], 'round');
      if (via) edge(via, target);
      if (above) under(above, via ?? target);
      above = target;
    }
    lines.push('  end');
    const choice = [`${fe.chooser}:`, `one of ${fe.backends.length} backends per new connection`];
    edge(last, box, onward ? [onward, ...choice] : choice);
    if (fe.affinity) lines.push(`  %% session affinity: ${fe.affinity.timeoutSeconds}s`);
    endFrame();
  }
  return `${lines.join('\n')}\n`;
}
