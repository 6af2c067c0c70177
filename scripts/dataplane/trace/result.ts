// A session's packets read against the node's dataplane model: one TracedRequest per connection,
// the tally beside the shares, and notes for what the trace could not see.
import type { Mode } from '../../catalogue/modes.ts';
import type { DataplaneModel } from '../model.ts';
import { findFrontend } from '../query.ts';
import type { PacketTrace, TraceResult } from '../../wire/trace.ts';
import { flowLabel, type TraceFlow } from './flow.ts';
import type { TraceMethod } from './method.ts';
import { resolveRequest } from './resolve.ts';
import { tally } from './tally.ts';

export interface TraceInput {
  mode?: Mode;
  node: string;
  method: TraceMethod;
  flow: TraceFlow;
  model: DataplaneModel;
  packets: readonly PacketTrace[];
  sent: number;
}

export function traceResult(t: TraceInput): TraceResult {
  const requests = t.packets.map((p) => resolveRequest(p, t.model));
  const view = findFrontend(t.model, `${t.flow.ip}:${t.flow.port}/${t.flow.protocol.toUpperCase()}`);
  const fe =
    view?.frontends.find((f) => requests.some((r) => r.frontend?.ip === f.ip && r.frontend.type === f.type)) ?? view?.frontends[0] ?? null;
  const notes: string[] = [];
  if (!view) notes.push(`No Service on ${t.node} answers ${flowLabel(t.flow)}: the rules leave it untranslated.`);
  if (requests.length < t.sent)
    notes.push(`${t.sent - requests.length} of ${t.sent} requests were not seen in the trace window (${t.method.unseen}).`);
  return {
    ...(t.mode ? { mode: t.mode } : {}),
    node: t.node,
    method: t.method.id,
    flow: { ...t.flow },
    requests,
    tally: tally(requests, fe),
    sent: t.sent,
    notes,
  };
}
