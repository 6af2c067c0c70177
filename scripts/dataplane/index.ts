// The dataplane module's front door: one parse() for every tool output, plus look-ups and output.
import { parseCiliumServiceJson, parseCiliumServiceList } from './cilium.ts';
import { parseIptablesSave } from './iptables.ts';
import { parseIpvsadm, parseProcIpVs } from './ipvs.ts';
import type { DataplaneModel, Format, ParseOptions } from './model.ts';
import { FORMATS } from './model.ts';
import { parseNftJson } from './nft.ts';

export type { Backend, DataplaneModel, Format, Frontend, FrontendType, ParseOptions } from './model.ts';
export { FORMATS } from './model.ts';
export { ParseError } from './parse-error.ts';
export { findFrontend, findService, toJson, type JsonView } from './query.ts';
export { toMermaid } from './mermaid.ts';
export { toText } from './text.ts';
export { commandsToRead, RULE_DUMPS } from './read-commands.ts';

const PARSERS: Record<Format, (text: string, opts: ParseOptions) => DataplaneModel> = {
  'iptables-save': (t) => parseIptablesSave(t),
  'nft-json': (t) => parseNftJson(t),
  ipvsadm: (t, o) => parseIpvsadm(t, o),
  'proc-ip-vs': (t, o) => parseProcIpVs(t, o),
  cilium: (t, o) => parseCiliumServiceList(t, o),
  'cilium-json': (t) => parseCiliumServiceJson(t),
};

export function isFormat(s: string): s is Format {
  return (FORMATS as readonly string[]).includes(s);
}

/** Parses one tool's output; throws ParseError (with line and text) for anything it does not understand. */
export function parse(format: Format, text: string, opts: ParseOptions = {}): DataplaneModel {
  return PARSERS[format](text, opts);
}
