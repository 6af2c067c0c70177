/**
 * A trace's answer in words, under the diagram it is drawn on: how it was read, the first
 * request's walk step by step (table, chain, the rule as the tool prints it, what it did), the
 * rewrite, where all the traced requests went beside the shares the rules give, and the notes.
 * DOM only; the request and the diagram live in trace-control.ts and trace-diagram.ts.
 */
import type { PacketTrace, TraceMethodId, TraceResult, TraceStep, TracedRequest } from '../../scripts/wire/trace.ts';
import { percent, tableWrap } from './dataplane-result.ts';
import { el } from './dom.ts';
import { headingTag } from './heading-level.ts';
import { richText } from './rich-text.ts';
import { hostPort } from './trace-diagram.ts';

/** How each method reads the kernel's walk, for the line above the steps. */
const METHOD_WORDS: Record<TraceMethodId, string> = {
  'xtables-monitor':
    'Read with `xtables-monitor --trace`: a TRACE rule in the raw table marked the requests’ first packets, and the kernel reported every rule and chain policy they met (the rule left the node when the trace ended).',
  'nft-monitor':
    'Read with `nft monitor trace`: a `dplab-trace` table set `nftrace` on the requests’ first packets, and the kernel reported every rule and chain policy they met (the table left the node when the trace ended).',
  'cilium-monitor':
    'Read with `cilium-dbg monitor` in the node’s Cilium agent: its eBPF datapath reported where it saw each connection’s first packet (and the socket load balancer, the sockets it translated); there are no chains to walk (the monitor ended when the trace did).',
};

const OUTCOME_WORDS: Record<TracedRequest['outcome'], string> = {
  dnat: 'sent on to the backend the rules chose',
  reject: 'refused by a rule (the last step)',
  drop: 'dropped by a rule (the last step)',
  untranslated: 'no Service rule matched: the address was left as it was',
};

function address(a: { ip: string; port: number }): string {
  return hostPort(a.ip, a.port);
}

/** Each request in one line: where it went. */
const WENT: Record<TracedRequest['outcome'], string> = {
  dnat: 'sent to',
  reject: 'refused',
  drop: 'dropped',
  untranslated: 'not translated',
};

/** What a step did, in words: "jump to KUBE-SVC-…", "left the chain by its policy: accept". */
function stepVerdict(s: TraceStep): string {
  if (s.kind === 'event' && s.verdict === 'forward') return 'seen here, on its way';
  if (s.kind === 'event' && s.verdict === 'translate') return 'the socket’s destination, as the socket load balancer saw it';
  if (s.kind === 'policy') return `left the chain by its policy: ${s.verdict}`;
  if (s.kind === 'return') return 'fell off the end of the chain: back to the one that jumped here';
  if ((s.verdict === 'jump' || s.verdict === 'goto') && s.target) return `${s.verdict} to ${s.target}`;
  if (s.verdict === 'continue') return 'matched, and the packet went on to the next rule';
  return s.verdict;
}

function stepItem(s: TraceStep): HTMLLIElement {
  const where =
    s.kind === 'event'
      ? el('p', { class: 'dp-step-where' }, el('span', { class: 'dp-step-table' }, s.table), ' · seen at ', el('code', {}, s.chain))
      : el(
          'p',
          { class: 'dp-step-where' },
          el('span', { class: 'dp-step-table' }, `${s.table} table`),
          ' · chain ',
          el('code', {}, s.chain),
        );
  const item = el('li', { class: 'dp-step', 'data-kind': s.kind, 'data-verdict': s.verdict }, where);
  if (s.rule) item.append(el('pre', { class: 'dp-step-rule' }, el('code', {}, s.rule)));
  item.append(el('p', { class: 'dp-step-verdict' }, el('strong', {}, 'Did: '), stepVerdict(s)));
  return item;
}

/** Where an agent's trace says the backend was chosen, in a sentence. */
const REWRITE_AT: Record<NonNullable<PacketTrace['rewriteAt']>, string> = {
  connect: ' (chosen at connect(): the packet never carried the Service address, the socket already had the backend’s)',
  packet: ' (translated per packet: the packet left addressed to the Service, and the datapath rewrote it)',
};

function firstRequest(r: TracedRequest, level: number): HTMLElement {
  const p = r.packet;
  const rewrite = p.rewrittenTo
    ? el(
        'p',
        { class: 'dp-rewrite' },
        el('strong', {}, 'Rewrite: '),
        el('code', {}, address(p.to)),
        ' → ',
        el('code', {}, address(p.rewrittenTo)),
        p.rewriteAt ? REWRITE_AT[p.rewriteAt] : ' (the Service address replaced by the endpoint’s)',
      )
    : el('p', { class: 'dp-rewrite' }, el('strong', {}, 'Rewrite: '), 'none, the packet kept ', el('code', {}, address(p.to)));
  const walked = p.steps.some((s) => s.kind === 'event') ? 'Seen at: ' : 'Chains walked: ';
  const via = r.path.length ? el('p', { class: 'dp-path' }, el('strong', {}, walked), el('code', {}, r.path.join(' → '))) : null;
  return el(
    'div',
    { class: 'dp-trace-first' },
    el(headingTag(level), {}, 'The first request, step by step'),
    el(
      'p',
      {},
      `${p.protocol.toUpperCase()} from `,
      el('code', {}, address(p.from)),
      ' to ',
      el('code', {}, address(p.to)),
      `: ${OUTCOME_WORDS[r.outcome]}.`,
    ),
    ...(via ? [via] : []),
    rewrite,
    el('ol', { class: 'dp-steps' }, ...p.steps.map(stepItem)),
  );
}

function tallyTable(t: TraceResult): HTMLElement {
  const body = el('tbody');
  for (const b of t.tally)
    body.append(
      el(
        'tr',
        { 'data-backend': address(b) },
        el('td', {}, el('code', {}, address(b))),
        el('td', { class: 'dp-num' }, String(b.count)),
        el('td', { class: 'dp-num' }, percent(b.share)),
      ),
    );
  return tableWrap(
    el(
      'table',
      { class: 'dp-tally' },
      el(
        'caption',
        {},
        `Where the ${t.requests.length} traced ${t.requests.length === 1 ? 'request' : 'requests'} went, beside the share the rules give each backend`,
      ),
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          el('th', { scope: 'col' }, 'Backend'),
          el('th', { scope: 'col' }, 'Requests'),
          el('th', { scope: 'col' }, 'Share by the rules'),
        ),
      ),
      body,
    ),
    'Where the traced requests went',
  );
}

function requestItem(r: TracedRequest): HTMLLIElement {
  const p = r.packet;
  const to = r.backend ?? p.rewrittenTo;
  const via = r.backend?.via ? [' via ', el('code', {}, r.backend.via)] : [];
  return el(
    'li',
    { 'data-outcome': r.outcome },
    `from ${address(p.from)}: ${WENT[r.outcome]}`,
    ...(r.outcome === 'dnat' && to ? [' ', el('code', {}, address(to)), ...via] : []),
  );
}

/** Every traced request in a line, in the order sent. */
function requestList(t: TraceResult, level: number): HTMLElement {
  return el(
    'div',
    { class: 'dp-trace-each' },
    el(headingTag(level), {}, 'Each traced request'),
    el('ol', { class: 'dp-requests' }, ...t.requests.map(requestItem)),
  );
}

/** "10 requests from the node dplab-iptables-worker to 10.96.45.112:80, 6 traced" */
function traceHeadline(t: TraceResult): string {
  const from = t.flow.client ? `the pod at ${t.flow.client}` : `the node ${t.node}`;
  return `${t.sent} ${t.sent === 1 ? 'request' : 'requests'} from ${from} to ${t.flow.protocol.toUpperCase()} ${address(t.flow)}, ${t.requests.length} traced on ${t.node}`;
}

/** Fills `target` with the answer in words (the diagram is drawn by the caller); its headings at `level`. */
export function renderTrace(target: HTMLElement, t: TraceResult, level: number): void {
  const first = t.requests[0];
  target.replaceChildren(
    el('p', { class: 'dp-trace-headline' }, el('strong', {}, traceHeadline(t))),
    el('p', { class: 'dp-muted' }, richText(METHOD_WORDS[t.method])),
    ...(first ? [firstRequest(first, level)] : [el('p', {}, 'No request was seen in the trace window, so there are no steps to show.')]),
    ...(t.tally.length ? [tallyTable(t)] : []),
    ...(t.requests.length > 1 ? [requestList(t, level)] : []),
    ...(t.notes.length
      ? [el('ul', { class: 'dp-trace-notes' }, ...t.notes.map((n) => el('li', {}, el('strong', {}, 'Note: '), richText(n))))]
      : []),
  );
}
