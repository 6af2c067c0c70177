/**
 * "Trace a request" under a column's diagram: from the node or a client pod, how many requests,
 * a Trace button; then the runner's trace (POST /api/dataplane/:mode/trace) drawn on that diagram
 * (trace-diagram.ts) and told in words under it (trace-view.ts). In a mode the runner cannot
 * trace, or on a bundled fixture, it says why instead of offering a button.
 */
import { isServiceRef, type ExplainResponse, type JsonFrontend } from '../../scripts/wire/explain.ts';
import type { Mode } from '../../scripts/wire/modes.ts';
import { traceResultSchema, type TraceRequest, type TraceResult } from '../../scripts/wire/trace.ts';
import { NO_TRACE_BECAUSE, TRACE_METHOD_OF } from '../../scripts/wire/trace-modes.ts';
import { diagramLabel, drawDiagram, renderError, type ShownError } from './dataplane-result.ts';
import { el } from './dom.ts';
import { headingTag } from './heading-level.ts';
import { blockerError } from './live-error.ts';
import { diagramTheme } from './mermaid-render.ts';
import { TRACE_COLOURS } from './mermaid-theme.ts';
import { richText } from './rich-text.ts';
import { api, RunnerUnavailable } from './runner-api.ts';
import { drawTrace } from './trace-diagram.ts';
import { renderTrace } from './trace-view.ts';

/** As the request schema bounds it (traceRequestSchema: 1–20). */
const MIN_COUNT = 1;
const MAX_COUNT = 20;
const DEFAULT_COUNT = 10;

export interface TraceTarget {
  /** The column's source: a live mode, or null for a bundled fixture. */
  mode: Mode | null;
  /** The answer the column shows, whose diagram the trace is drawn on. */
  shown: ExplainResponse;
  /** The diagram's box in the column. */
  diagram: HTMLElement;
  /** The section's heading level (headingLevelAt where the column is); its parts' one below. */
  level: number;
}

let sections = 0;

/** The trace section for a column's answer. */
export function traceSection(t: TraceTarget): HTMLElement {
  const id = `dp-trace-${++sections}`;
  const heading = el(headingTag(t.level), { class: 'dp-trace-title', id: `${id}-title` }, 'Trace a request');
  // A group, not a region: each column has one, and landmarks must have names of their own.
  const section = el('div', { class: 'dp-trace', role: 'group', 'aria-labelledby': heading.id }, heading);
  const method = t.mode ? TRACE_METHOD_OF[t.mode] : undefined;
  if (!t.mode) {
    section.append(
      el(
        'p',
        { class: 'dp-muted dp-trace-unavailable' },
        'A trace sends real requests and watches the kernel walk them, so it needs a running cluster: pick one under “Running cluster (live)” as the source.',
      ),
    );
    return section;
  }
  if (!method) {
    section.append(
      el(
        'p',
        { class: 'dp-trace-unavailable' },
        `Tracing a request is not available in the ${t.mode} cluster yet. `,
        richText(NO_TRACE_BECAUSE[t.mode] ?? ''),
      ),
    );
    return section;
  }
  return traceForm(section, id, { ...t, mode: t.mode });
}

/** The Service's ports as the diagram shows them: its ClusterIP frontends' ports, and whether it has a NodePort. */
function targets(r: ExplainResponse): { clusterIps: JsonFrontend[]; nodePorts: JsonFrontend[] } {
  return {
    clusterIps: r.frontends.filter((f) => f.type === 'ClusterIP'),
    nodePorts: r.frontends.filter((f) => f.type === 'NodePort'),
  };
}

function radio(name: string, value: string, checked = false): HTMLInputElement {
  const input = el('input', { type: 'radio', name, value });
  input.checked = checked;
  return input;
}

function traceForm(section: HTMLElement, uid: string, t: TraceTarget & { mode: Mode }): HTMLElement {
  const { clusterIps, nodePorts } = targets(t.shown);
  const toClusterIp = radio(`${uid}-to`, 'clusterip', true);
  const toNodePort = radio(`${uid}-to`, 'nodeport');
  const ports = [...new Set(clusterIps.map((f) => f.port))];
  const port = el('select', { name: 'port' }, ...ports.map((p) => el('option', { value: String(p) }, String(p))));
  const clusterIpText = clusterIps[0] ? `its ClusterIP (${clusterIps[0].ip})` : 'its ClusterIP';
  const nodePortText = nodePorts.length
    ? `its NodePort (${nodePorts.map((f) => f.port).join(', ')}) on the node’s address`
    : 'its NodePort (it has none on this node)';
  toNodePort.disabled = !nodePorts.length;

  const fromNode = radio(`${uid}-from`, 'node', true);
  const fromPod = radio(`${uid}-from`, 'pod');
  const nodes = t.shown.nodes?.length ? t.shown.nodes : t.shown.node ? [t.shown.node] : [];
  const node = el('select', { name: 'node', 'aria-label': 'Node' }, ...nodes.map((n) => el('option', { value: n }, n)));
  if (t.shown.node) node.value = t.shown.node;
  const pod = el('input', {
    type: 'text',
    name: 'pod',
    placeholder: 'namespace/name',
    spellcheck: 'false',
    autocomplete: 'off',
    'aria-label': 'Client pod (namespace/name)',
    disabled: '',
  });
  const count = el('input', {
    type: 'number',
    name: 'count',
    min: String(MIN_COUNT),
    max: String(MAX_COUNT),
    step: '1',
    value: String(DEFAULT_COUNT),
    inputmode: 'numeric',
  });
  const button = el('button', { type: 'submit', class: 'dp-button primary' }, 'Trace');
  const status = el('p', { class: 'dp-trace-status', role: 'status', 'aria-live': 'polite' });
  const result = el('div', { class: 'dp-trace-result' });
  const form = el(
    'form',
    { class: 'dp-trace-form', 'aria-describedby': `${uid}-help`, novalidate: '' },
    el(
      'fieldset',
      { class: 'dp-trace-choice' },
      el('legend', {}, `Send to ${t.shown.service}`),
      el('label', { class: 'dp-check' }, toClusterIp, ` ${clusterIpText}`),
      el('label', { class: 'dp-check' }, toNodePort, ` ${nodePortText}`),
      ...(ports.length > 1 ? [el('label', { class: 'dp-check' }, 'port ', port)] : []),
    ),
    el(
      'fieldset',
      { class: 'dp-trace-choice' },
      el('legend', {}, 'From'),
      el('label', { class: 'dp-check dp-trace-grow' }, fromNode, ' the node ', node),
      el('label', { class: 'dp-check dp-trace-grow' }, fromPod, ' a client pod ', pod),
    ),
    el('label', { class: 'dp-field' }, `Requests (${MIN_COUNT}–${MAX_COUNT}) `, count),
    button,
  );
  const help = el(
    'p',
    { id: `${uid}-help`, class: 'dp-muted dp-help' },
    `Sends new connections to ${t.shown.service} and has the kernel report each rule their first packet meets (${TRACE_METHOD_OF[t.mode]}), then takes the trace off the node. From a pod, the trace runs on the pod’s node. Only new connections walk the rules: one the node already tracks skips them.`,
  );
  const syncPod = () => {
    pod.disabled = !fromPod.checked;
    node.disabled = fromPod.checked;
    if (fromPod.checked) pod.focus();
  };
  fromNode.addEventListener('change', syncPod);
  node.addEventListener('change', () => {
    fromNode.checked = true;
    syncPod();
  });
  fromPod.addEventListener('change', syncPod);
  let controller: AbortController | undefined;
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const n = Number(count.value);
    if (!Number.isInteger(n) || n < MIN_COUNT || n > MAX_COUNT) {
      status.textContent = `Give a whole number of requests from ${MIN_COUNT} to ${MAX_COUNT}.`;
      count.focus();
      return;
    }
    const from = pod.value.trim();
    if (fromPod.checked && !isServiceRef(from)) {
      status.textContent = 'Give the client pod as namespace/name, for example default/client.';
      pod.focus();
      return;
    }
    // From a pod, the trace runs on the pod's node (the runner finds it); from a node, on that one.
    const body: TraceRequest = {
      service: t.shown.service,
      count: n,
      ...(ports.length > 1 ? { port: Number(port.value) } : {}),
      ...(toNodePort.checked ? { nodePort: true } : {}),
      ...(fromPod.checked ? { from } : node.value ? { node: node.value } : {}),
    };
    controller?.abort();
    controller = new AbortController();
    void run(body, controller.signal);
  });

  const run = async (body: TraceRequest, signal: AbortSignal): Promise<void> => {
    button.disabled = true;
    section.setAttribute('aria-busy', 'true');
    section.dataset.state = 'tracing';
    status.textContent = `Tracing ${body.count} ${body.count === 1 ? 'request' : 'requests'} in the ${t.mode} cluster: turning the trace on, sending, reading what the kernel reports… (a few seconds; at most about ${3 * (body.count ?? DEFAULT_COUNT) + 5} s)`;
    try {
      const trace = await api(`/api/dataplane/${encodeURIComponent(t.mode)}/trace`, traceResultSchema, { method: 'POST', body, signal });
      if (signal.aborted || !section.isConnected) return;
      renderTrace(result, trace, t.level + 1);
      const where = drawOn(t, trace);
      if (where) result.prepend(el('p', { class: 'dp-trace-elsewhere' }, el('strong', {}, 'Note: '), where));
      section.dataset.state = 'ok';
      status.textContent = `Traced ${trace.requests.length} of ${trace.sent} requests on ${trace.node}${where ? `. ${where}` : ': the path they took is marked on the diagram above.'}`;
    } catch (err) {
      if (signal.aborted || (err as Error).name === 'AbortError') return;
      const e = err as ShownError;
      const blocked = err instanceof RunnerUnavailable ? null : await blockerError(t.mode, e, 'Then press Trace again.');
      if (signal.aborted) return;
      const shown =
        err instanceof RunnerUnavailable ? { message: err.message } : (blocked ?? { message: e.message, fix: e.fix, details: e.details });
      section.dataset.state = 'error';
      renderError(result, shown);
      status.textContent = `Could not trace: ${shown.message}`;
    } finally {
      if (!signal.aborted) {
        button.disabled = false;
        section.removeAttribute('aria-busy');
      }
    }
  };

  section.append(form, help, status, result);
  return section;
}

/**
 * Draws the trace on the column's diagram. Returns what the learner should know when the
 * diagram cannot show it: read on another node than the trace ran on, or without its frontend.
 */
function drawOn(t: TraceTarget, trace: TraceResult): string | null {
  const { source, located } = drawTrace(t.shown.mermaid, trace, TRACE_COLOURS[diagramTheme()]);
  void drawDiagram(t.diagram, source, `${diagramLabel(t.shown)}, with the traced requests’ path marked`).then(() => {
    t.diagram.dataset.traced = located.frame ? 'marked' : 'none';
  });
  if (t.shown.node && t.shown.node !== trace.node)
    return `The diagram shows the rules of ${t.shown.node}, and the trace ran on ${trace.node}, whose rules can differ. To draw them, choose ${trace.node} as the column’s node and press Refresh.`;
  if (!located.frame && trace.requests.length) return 'The traced requests’ frontend is not in this diagram, so nothing is marked on it.';
  return null;
}
