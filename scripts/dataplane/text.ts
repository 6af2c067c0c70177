// The default `dplab explain` output: a plain table a learner can read in a terminal.
import type { DataplaneModel, ExternalRule, Format, ServiceView } from './model.ts';
import { hostPort } from './addr.ts';

const PERCENT_DIGITS = 1;
/**
 * What a frontend with no local backend left does to a connection, per rule format (a format
 * without its entry does not compile): Cilium refuses it (serviceNoBackendResponse: reject, its
 * default); kube-proxy's rules drop it. The text below and the diagram (mermaid.ts) both say it.
 */
export const WITHOUT_LOCAL_BACKEND: Readonly<Record<Format, 'drops' | 'refuses'>> = {
  'iptables-save': 'drops',
  'nft-json': 'drops',
  ipvsadm: 'drops',
  'proc-ip-vs': 'drops',
  cilium: 'refuses',
  'cilium-json': 'refuses',
};
const TRAFFIC: Record<ExternalRule['traffic'], string> = { all: 'every packet', pods: 'from a pod', node: 'sent by this node' };

/** Which packets a rule of an external chain takes: "from a pod (-s 10.244.0.0/16)". */
export function externalRuleTraffic(r: ExternalRule): string {
  return `${TRAFFIC[r.traffic]}${r.match ? ` (${r.match})` : ''}`;
}

/** One rule of an external chain in words: "sent by this node (--src-type LOCAL): mark for masquerade". */
function externalRuleLabel(r: ExternalRule): string {
  return `${externalRuleTraffic(r)}: ${r.action === 'masquerade' ? 'mark for masquerade' : `to ${r.target}`}`;
}

export function toText(view: ServiceView, model: DataplaneModel): string {
  const out: string[] = [];
  out.push(`Service: ${view.service ?? '(not named by this tool)'}   [${model.format}: ${model.entries} ${model.entriesLabel}]`);
  for (const fe of view.frontends) {
    const flags = [
      fe.type === 'unknown' ? 'Service range not given: see the note' : null,
      fe.portName ? `port ${fe.portName}` : null,
      fe.localOnly ? 'Local traffic policy' : null,
      fe.dropsWithoutLocalEndpoints
        ? WITHOUT_LOCAL_BACKEND[model.format] === 'refuses'
          ? 'REFUSES here: no local backend'
          : 'DROPS here: no local endpoint'
        : null,
      fe.affinity ? `affinity ClientIP ${fe.affinity.timeoutSeconds}s` : null,
      fe.sourceRanges?.length ? `only from ${fe.sourceRanges.join(', ')}` : null,
      fe.backends.length === 0 && fe.noBackendVerdict === 'reject' ? 'REJECTS: no endpoints' : null,
    ].filter(Boolean);
    out.push('');
    out.push(`${fe.type.padEnd(12)} ${hostPort(fe.ip, fe.port)}/${fe.protocol}${flags.length ? `   (${flags.join(', ')})` : ''}`);
    out.push(`  path: ${fe.path.join(' -> ')}   choice: ${fe.chooser}`);
    if (fe.external?.rules.length) {
      out.push(`  ${fe.external.chain}, before its last jump:`);
      for (const r of fe.external.rules) out.push(`    ${externalRuleLabel(r).padEnd(60)}${r.comment ? ` "${r.comment}"` : ''}`.trimEnd());
    }
    if (fe.backends.length === 0) out.push('  (no backends)');
    for (const b of fe.backends) {
      const share = `${(b.share * 100).toFixed(PERCENT_DIGITS)}%`.padStart(6);
      out.push(`  -> ${hostPort(b.ip, b.port).padEnd(22)} ${share}${b.detail ? `   ${b.detail}` : ''}`);
    }
  }
  for (const note of model.notes ?? []) out.push('', `note: ${note}`);
  return `${out.join('\n')}\n`;
}
