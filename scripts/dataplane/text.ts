// The default `dplab explain` output: a plain table a learner can read in a terminal.
import type { DataplaneModel, ServiceView } from './model.ts';
import { hostPort } from './addr.ts';

const PERCENT_DIGITS = 1;

export function toText(view: ServiceView, model: DataplaneModel): string {
  const out: string[] = [];
  out.push(`Service: ${view.service ?? '(not named by this tool)'}   [${model.format}: ${model.entries} ${model.entriesLabel}]`);
  for (const fe of view.frontends) {
    const flags = [
      fe.type === 'unknown' ? 'Service range not given: see the note' : null,
      fe.portName ? `port ${fe.portName}` : null,
      fe.localOnly ? 'Local traffic policy' : null,
      fe.dropsWithoutLocalEndpoints ? 'DROPS here: no local endpoint' : null,
      fe.affinity ? `affinity ClientIP ${fe.affinity.timeoutSeconds}s` : null,
      fe.sourceRanges?.length ? `only from ${fe.sourceRanges.join(', ')}` : null,
      fe.backends.length === 0 && fe.noBackendVerdict === 'reject' ? 'REJECTS: no endpoints' : null,
    ].filter(Boolean);
    out.push('');
    out.push(`${fe.type.padEnd(12)} ${hostPort(fe.ip, fe.port)}/${fe.protocol}${flags.length ? `   (${flags.join(', ')})` : ''}`);
    out.push(`  path: ${fe.path.join(' -> ')}   choice: ${fe.chooser}`);
    if (fe.backends.length === 0) out.push('  (no backends)');
    for (const b of fe.backends) {
      const share = `${(b.share * 100).toFixed(PERCENT_DIGITS)}%`.padStart(6);
      out.push(`  -> ${hostPort(b.ip, b.port).padEnd(22)} ${share}${b.detail ? `   ${b.detail}` : ''}`);
    }
  }
  for (const note of model.notes ?? []) out.push('', `note: ${note}`);
  return `${out.join('\n')}\n`;
}
