// A traced packet read against the dataplane model: the chains it walked to the rule that decided
// (KUBE-SERVICES → KUBE-SVC-… → KUBE-SEP-…, or services → service-… → endpoint-…), which Service
// frontend those chains are, and which backend the DNAT chose with the share the rules give it.
import type { DataplaneModel, Frontend } from '../model.ts';
import { findFrontend } from '../query.ts';
import type { PacketTrace, TracedRequest, TraceStep } from '../../wire/trace.ts';
import { isReject } from './events.ts';

const isDnat = (s: TraceStep) => /(^|\s)(-j DNAT|dnat to)(\s|$)/.test(s.rule ?? '');

/**
 * The chains from the base chain to the step that decided: a jump or goto pushes its target; a
 * step in a chain already on the route drops what was entered after it (the called chain
 * returned); a step in any other chain starts a new route (the next hook, or the next table).
 */
function routeTo(steps: readonly TraceStep[], decider: TraceStep): string[] {
  let route: Array<{ table: string; chain: string }> = [];
  for (const s of steps) {
    const at = route.map((r) => r.table === s.table && r.chain === s.chain).lastIndexOf(true);
    route = at >= 0 ? route.slice(0, at + 1) : [{ table: s.table, chain: s.chain }];
    if (s === decider) break;
    if ((s.verdict === 'jump' || s.verdict === 'goto') && s.target) route.push({ table: s.table, chain: s.target });
  }
  // The base chain (a hook's: OUTPUT, nat-output) is where every packet starts; the path is what it jumped to.
  return route.slice(1).map((r) => r.chain);
}

/** A trace of an agent's events (Cilium): no rules, so the outcome is what the events showed, the path where they were seen. */
const byEvents = (packet: PacketTrace) => packet.steps.some((s) => s.kind === 'event') || packet.rewriteAt !== undefined;

export function resolveRequest(packet: PacketTrace, model: DataplaneModel): TracedRequest {
  const events = byEvents(packet);
  const decider = events
    ? null
    : (packet.steps.find(isDnat) ?? packet.steps.find((s) => s.verdict === 'drop' && s.kind === 'rule') ?? null);
  const outcome = outcomeOf(packet, decider, events);
  const path = events ? packet.steps.map((s) => s.chain) : decider ? routeTo(packet.steps, decider) : [];
  const view = findFrontend(model, `${packet.to.ip}:${packet.to.port}/${packet.protocol.toUpperCase()}`);
  const walked = new Set(path);
  const fe: (Frontend & { portName: string | null }) | undefined =
    view?.frontends.find((f) => f.path.some((c) => walked.has(c)) || f.backends.some((b) => b.via && walked.has(b.via))) ??
    view?.frontends[0];
  const to = packet.rewrittenTo;
  const backend =
    outcome !== 'dnat'
      ? undefined
      : (fe?.backends.find((b) => b.via && walked.has(b.via)) ?? fe?.backends.find((b) => to && b.ip === to.ip && b.port === to.port));
  const dnatTo = to ?? dnatTarget(decider);
  return {
    packet,
    service: fe && view?.service ? `${view.service}${fe.portName ? `:${fe.portName}` : ''}` : null,
    frontend: fe ? { type: fe.type, ip: fe.ip, port: fe.port, protocol: fe.protocol } : null,
    path,
    backend: backend
      ? { ip: backend.ip, port: backend.port, via: backend.via ?? null, share: backend.share }
      : outcome === 'dnat' && dnatTo
        ? { ...dnatTo, via: null, share: 0 }
        : null,
    outcome,
  };
}

function outcomeOf(packet: PacketTrace, decider: TraceStep | null, events: boolean): TracedRequest['outcome'] {
  if (events) return packet.verdict === 'drop' ? 'drop' : packet.rewrittenTo ? 'dnat' : 'untranslated';
  if (!decider) return 'untranslated';
  return isDnat(decider) ? 'dnat' : isReject(decider) ? 'reject' : 'drop';
}

/** The address a DNAT rule names (`--to-destination 10.244.1.2:8080`, `dnat to 10.244.1.2:8080`). */
function dnatTarget(step: TraceStep | null): { ip: string; port: number } | null {
  const m = /(?:--to-destination|dnat to) (\d+\.\d+\.\d+\.\d+):(\d+)/.exec(step?.rule ?? '');
  return m ? { ip: m[1], port: Number(m[2]) } : null;
}
