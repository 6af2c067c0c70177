/**
 * A trace drawn on the explorer's diagram: the mermaid source the runner sent for a Service's path
 * (scripts/dataplane/mermaid.ts) read back into its boxes and lines, the traced requests' chains
 * and backends found among them, and the same source with those boxes and lines marked (classDef,
 * class, linkStyle) and each backend's box given its count. Pure: no DOM, no mermaid.
 */
import type { TraceResult } from '../../scripts/wire/trace.ts';

/** One box of the flowchart as declared: `n3["KUBE-SVC-<br/>LOLE4…"]` or `n4("DNAT to pod<br/>…")`. */
interface DiagramNode {
  id: string;
  /** The label's lines, as drawn (a long chain name spans several). */
  lines: string[];
  /** The source line that declares it. */
  at: number;
  /** The frontend's frame (`f0`, `f1`, …) it is drawn in. */
  frame: string | null;
  /** The backends' box (`b1`, …) it is drawn in, if any. */
  box: string | null;
}

interface DiagramLink {
  /** mermaid numbers links in the order written, invisible ones (`~~~`) included: linkStyle's index. */
  index: number;
  from: string;
  to: string;
  kind: 'solid' | 'dotted' | 'invisible';
}

export interface Flowchart {
  source: string[];
  nodes: DiagramNode[];
  links: DiagramLink[];
}

const NODE = /^\s*(n\d+)(\(|\[)"(.*)"(\)|\])\s*$/;
const SUBGRAPH = /^\s*subgraph\s+(\S+)/;
const END = /^\s*end\s*$/;
const LINK = /^\s*(\S+)\s+(-->|-- ".*" -->|-\.->|-\. ".*" \.->|~~~)\s+(\S+)\s*$/;

/** Mermaid's entities in a label, as escapeLabel (scripts/dataplane/mermaid.ts) writes them, back to text. */
function unescape(text: string): string {
  return text
    .replace(/#quot;/g, '"')
    .replace(/#lt;/g, '<')
    .replace(/#gt;/g, '>')
    .replace(/#amp;/g, '&');
}

export function parseFlowchart(source: string): Flowchart {
  const lines = source.replace(/\n$/, '').split('\n');
  const nodes: DiagramNode[] = [];
  const links: DiagramLink[] = [];
  const open: string[] = [];
  lines.forEach((line, at) => {
    const sub = SUBGRAPH.exec(line);
    if (sub) return void open.push(sub[1]);
    if (END.test(line)) return void open.pop();
    const n = NODE.exec(line);
    if (n) {
      nodes.push({
        id: n[1],
        lines: n[3].split('<br/>').map(unescape),
        at,
        frame: open.find((s) => s.startsWith('f')) ?? null,
        box: open.find((s) => s.startsWith('b')) ?? null,
      });
      return;
    }
    const l = LINK.exec(line);
    if (l) {
      const kind = l[2] === '~~~' ? 'invisible' : l[2].startsWith('-.') ? 'dotted' : 'solid';
      links.push({ index: links.length, from: l[1], to: l[3], kind });
    }
  });
  return { source: lines, nodes, links };
}

/** Whether some run of the label's lines, joined, is `text` (a name wrapped over lines stays whole within one part). */
function spans(lines: readonly string[], text: string): boolean {
  for (let i = 0; i < lines.length; i++) {
    let joined = '';
    for (let j = i; j < lines.length && joined.length < text.length; j++) {
      joined += lines[j];
      if (joined === text) return true;
    }
  }
  return false;
}

/** `ip:port`, an IPv6 address in brackets. */
export function hostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** The box that ends in the pod's address (`DNAT to pod` / `dnat to pod` … `ip:port`). */
function endsAt(node: DiagramNode, address: string): boolean {
  const last = node.lines.at(-1) ?? '';
  return last === address || last.endsWith(` ${address}`);
}

export interface TraceOnDiagram {
  /** The frame of the traced frontend, null when the diagram has none for it. */
  frame: string | null;
  /** Boxes the traced requests walked: the frontend, its chains, the backends' own chains. */
  walked: string[];
  /** The backends' final boxes that got at least one request. */
  chosen: string[];
  /** Links between walked boxes (never an invisible one). */
  links: number[];
  /** Per backend's final box, the requests it got, for its label. */
  counts: Map<string, number>;
}

/** Which boxes and links of `chart` the traced requests went through. */
export function locateTrace(chart: Flowchart, trace: TraceResult): TraceOnDiagram {
  const fe = trace.requests.find((r) => r.frontend)?.frontend;
  const none: TraceOnDiagram = { frame: null, walked: [], chosen: [], links: [], counts: new Map() };
  if (!fe) return none;
  const entry = `${hostPort(fe.ip, fe.port)}/${fe.protocol}`.toLowerCase();
  const title = chart.nodes.find((n) => n.frame && n.lines.some((l) => l.toLowerCase() === entry || l.toLowerCase().endsWith(` ${entry}`)));
  if (!title) return none;
  const inFrame = chart.nodes.filter((n) => n.frame === title.frame);
  const chains = new Set(trace.requests.filter((r) => r.frontend?.ip === fe.ip && r.frontend.port === fe.port).flatMap((r) => r.path));
  const walked = new Set([title.id, ...inFrame.filter((n) => [...chains].some((c) => spans(n.lines, c))).map((n) => n.id)]);

  const counts = new Map<string, number>();
  const chosen = new Set<string>();
  const boxes = new Set<string>();
  for (const b of trace.tally) {
    const final = inFrame.find((n) => n.box && endsAt(n, hostPort(b.ip, b.port)));
    if (!final) continue;
    counts.set(final.id, b.count);
    if (b.count > 0) {
      chosen.add(final.id);
      walked.add(final.id);
      boxes.add(final.box!);
    }
  }
  // Along the frontend's line of chains (title → … → the backends), what comes before a walked
  // chain was walked too: nftables' `@service-ips` lookup is a box of its own but no chain.
  const line = [title.id];
  for (;;) {
    const next = chart.links.find((l) => l.kind === 'solid' && l.from === line.at(-1) && inFrame.some((n) => n.id === l.to && !n.box));
    if (!next || line.includes(next.to)) break;
    line.push(next.to);
  }
  // A refused request ends at the line's last box (`rejected: no endpoints`, `dropped: …`); a request
  // that reached a backend passed every box before the backends (Cilium's socket and service map,
  // which its trace names no chain of).
  const refused = trace.requests.some((r) => r.outcome === 'reject' || r.outcome === 'drop');
  const lastWalked = refused || chosen.size ? line.length - 1 : line.findLastIndex((id) => walked.has(id));
  for (const id of line.slice(0, lastWalked + 1)) walked.add(id);

  const lit = (id: string) => walked.has(id) || boxes.has(id);
  const links = chart.links.filter((l) => l.kind !== 'invisible' && lit(l.from) && lit(l.to)).map((l) => l.index);
  return { frame: title.frame, walked: [...walked], chosen: [...chosen], links, counts };
}

export interface TraceColours {
  /** Border of a walked box and colour of a walked line. */
  stroke: string;
  /** Fill of a chosen backend's box. */
  chosenFill: string;
  /** Text on that fill. */
  chosenText: string;
}

/** "2 of 6 traced requests" */
function countLine(count: number, traced: number): string {
  return `${count} of ${traced} traced ${traced === 1 ? 'request' : 'requests'}`;
}

/** `source` with the trace drawn on it; unchanged when the trace's frontend is not in it. */
export function drawTrace(source: string, trace: TraceResult, colours: TraceColours): { source: string; located: TraceOnDiagram } {
  const chart = parseFlowchart(source);
  const located = locateTrace(chart, trace);
  if (!located.frame) return { source, located };
  const out = [...chart.source];
  const traced = trace.requests.length;
  for (const [id, count] of located.counts) {
    const node = chart.nodes.find((n) => n.id === id)!;
    out[node.at] = out[node.at].replace(/"(\)|\])\s*$/, `<br/>${countLine(count, traced)}"$1`);
  }
  const walkedOnly = located.walked.filter((id) => !located.chosen.includes(id));
  out.push(
    `  classDef dplabWalked stroke:${colours.stroke},stroke-width:3px`,
    `  classDef dplabChosen stroke:${colours.stroke},stroke-width:3px,fill:${colours.chosenFill},color:${colours.chosenText}`,
  );
  if (walkedOnly.length) out.push(`  class ${walkedOnly.join(',')} dplabWalked`);
  if (located.chosen.length) out.push(`  class ${located.chosen.join(',')} dplabChosen`);
  if (located.links.length) out.push(`  linkStyle ${located.links.join(',')} stroke:${colours.stroke},stroke-width:3px`);
  return { source: `${out.join('\n')}\n`, located };
}
