// Where N traced requests went, beside the share the rules give each backend (shares.ts, via the model).
import type { Frontend } from '../model.ts';
import type { TracedRequest, TraceTally } from '../../wire/trace.ts';

export function tally(requests: readonly TracedRequest[], frontend: Frontend | null): TraceTally {
  const rows = new Map<string, TraceTally[number]>();
  for (const b of frontend?.backends ?? [])
    rows.set(`${b.ip}:${b.port}`, { ip: b.ip, port: b.port, share: b.share, count: 0, via: b.via ?? null });
  for (const r of requests) {
    if (!r.backend) continue;
    const key = `${r.backend.ip}:${r.backend.port}`;
    const row = rows.get(key) ?? { ip: r.backend.ip, port: r.backend.port, share: 0, count: 0, via: r.backend.via };
    row.count++;
    rows.set(key, row);
  }
  return [...rows.values()];
}
