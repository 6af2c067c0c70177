// Reads iptables-save text into tables → chains → rules, checking its structure line by line.
// It knows nothing about kube-proxy; iptables.ts gives the rules their meaning.
import { ParseError } from './parse-error.ts';

export interface IptRule {
  line: number;
  text: string;
  table: string;
  chain: string;
  /** Option → its values ("-d" → ["10.96.0.1/32"], "--rcheck" → []). Later options win. */
  opts: Map<string, string[]>;
  /** Options written after "!" ("-s", "--dst-type"…). */
  negated: Set<string>;
  modules: string[];
  target: string | null;
}

export interface IptTable {
  name: string;
  chains: Map<string, { line: number; rules: IptRule[] }>;
}

export interface IptSave {
  tables: Map<string, IptTable>;
  ruleCount: number;
}

// Options iptables-save prints without a value. Everything else takes exactly one.
const FLAG_OPTIONS = new Set([
  '--rcheck',
  '--set',
  '--reap',
  '--rsource',
  '--rdest',
  '--update',
  '--remove',
  '--random',
  '--random-fully',
  '--persistent',
  '--log-uid',
  '--rttl',
]);

const CHAIN_LINE = /^:(\S+) (\S+) \[\d+:\d+\]$/;

export function readIptablesSave(text: string): IptSave {
  const tables = new Map<string, IptTable>();
  let current: IptTable | null = null;
  let openedAt = 0;
  let ruleCount = 0;
  const lines = text.split('\n');

  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const raw = lines[i].endsWith('\r') ? lines[i].slice(0, -1) : lines[i];
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('*')) {
      if (current) throw new ParseError(`table *${current.name} (opened on line ${openedAt}) is not closed by COMMIT`, lineNo, raw);
      const name = line.slice(1);
      if (!/^[a-z]+$/.test(name)) throw new ParseError('bad table name', lineNo, raw);
      current = { name, chains: new Map() };
      openedAt = lineNo;
      tables.set(name, current);
      continue;
    }
    if (!current) throw new ParseError('rule or chain outside a table: is this iptables-save output?', lineNo, raw);
    if (line === 'COMMIT') {
      current = null;
      continue;
    }
    if (line.startsWith(':')) {
      const m = CHAIN_LINE.exec(line);
      if (!m) throw new ParseError('bad chain declaration', lineNo, raw);
      current.chains.set(m[1], { line: lineNo, rules: [] });
      continue;
    }
    if (line.startsWith('-A ')) {
      const rule = parseRule(line, lineNo, raw, current.name);
      const chain = current.chains.get(rule.chain);
      if (!chain) throw new ParseError(`rule for undeclared chain ${rule.chain}`, lineNo, raw);
      chain.rules.push(rule);
      ruleCount++;
      continue;
    }
    if (/^-[INXFDRZP] /.test(line) || line.startsWith('-X')) {
      throw new ParseError('this is iptables-restore input, not iptables-save output', lineNo, raw);
    }
    throw new ParseError('unrecognised line', lineNo, raw);
  }
  if (current) throw new ParseError(`table *${current.name} is not closed by COMMIT (truncated output?)`, openedAt, `*${current.name}`);
  return { tables, ruleCount };
}

function parseRule(line: string, lineNo: number, raw: string, table: string): IptRule {
  const tokens = tokenize(line, lineNo, raw);
  const chain = tokens[1];
  if (!chain) throw new ParseError('rule without a chain', lineNo, raw);
  const rule: IptRule = { line: lineNo, text: raw, table, chain, opts: new Map(), negated: new Set(), modules: [], target: null };
  let negate = false;
  for (let i = 2; i < tokens.length; i++) {
    const tok = tokens[i];
    if (tok === '!') {
      negate = true;
      continue;
    }
    if (!tok.startsWith('-')) throw new ParseError(`unexpected value ${JSON.stringify(tok)}`, lineNo, raw);
    const values: string[] = [];
    if (!FLAG_OPTIONS.has(tok)) {
      const value = tokens[i + 1];
      if (value === undefined) throw new ParseError(`option ${tok} has no value`, lineNo, raw);
      values.push(value);
      i++;
    }
    if (tok === '-m') rule.modules.push(values[0]);
    else if (tok === '-j' || tok === '-g') rule.target = values[0];
    else rule.opts.set(tok, values);
    if (negate) rule.negated.add(tok);
    negate = false;
  }
  return rule;
}

/** Splits on spaces, honouring "double quotes" with \" and \\ escapes as iptables-save writes them. */
function tokenize(line: string, lineNo: number, raw: string): string[] {
  const out: string[] = [];
  let i = 0;
  const n = line.length;
  while (i < n) {
    while (i < n && line.charCodeAt(i) === 32) i++;
    if (i >= n) break;
    if (line[i] === '"') {
      let value = '';
      i++;
      let closed = false;
      while (i < n) {
        const c = line[i];
        if (c === '\\' && i + 1 < n) {
          value += line[i + 1];
          i += 2;
          continue;
        }
        if (c === '"') {
          closed = true;
          i++;
          break;
        }
        value += c;
        i++;
      }
      if (!closed) throw new ParseError('unterminated quote', lineNo, raw);
      out.push(value);
    } else {
      const start = i;
      while (i < n && line.charCodeAt(i) !== 32) i++;
      out.push(line.slice(start, i));
    }
  }
  return out;
}
