// What to run on a node (or, where an agent replaces kube-proxy, in the node's agent pod) to get
// each format, and which format each mode's node is read in (from the mode's record). The one
// home of these commands: the explorer's live read and the lab checks both take them from here.
import { perMode, type Agent, type ModeRecord } from '../catalogue/modes.ts';
import type { Format } from './model.ts';

const COMMANDS: Record<Format, readonly string[]> = {
  // All tables, not just nat: the filter table holds the "has no endpoints" REJECT/DROP rules.
  'iptables-save': ['iptables-save'],
  'nft-json': ['nft', '-j', 'list', 'table', 'ip', 'kube-proxy'],
  // kind nodes do not ship ipvsadm; the proc file needs nothing installed.
  ipvsadm: ['ipvsadm', '-Ln'],
  'proc-ip-vs': ['cat', '/proc/net/ip_vs'],
  cilium: ['cilium-dbg', 'service', 'list'],
  'cilium-json': ['cilium-dbg', 'service', 'list', '-o', 'json'],
};

export function commandsToRead(format: Format): string[] {
  return [...COMMANDS[format]];
}

export interface RuleDump {
  format: Format;
  /** null: run inside the node; else inside the node's pod of this agent (its container). */
  agent: Agent | null;
  command: readonly string[];
}

/** How a mode's node is read: in the record's format, inside the node or in its agent. */
export function ruleDumpOf(record: ModeRecord<string>): RuleDump {
  const d = record.dataplane;
  return { format: record.rules.format, agent: d.kind === 'agent' ? d.agent : null, command: COMMANDS[record.rules.format] };
}

/** What each mode's node shows and in which format. */
export const RULE_DUMPS = perMode(ruleDumpOf);

/** `kubectl` arguments that list the agent's pod on `node` (each agent keeps its own node's tables). */
export function agentPodOn(agent: Agent, node: string): string[] {
  return ['-n', agent.namespace, 'get', 'pods', '-l', agent.podLabel, '--field-selector', `spec.nodeName=${node}`];
}

/** `kubectl` arguments that run `command` in the agent's container of `pod`. */
export function execInAgentPod(agent: Agent, pod: string, command: readonly string[]): string[] {
  return ['-n', agent.namespace, 'exec', pod, '-c', agent.container, '--', ...command];
}
