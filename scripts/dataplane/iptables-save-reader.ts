// Reads iptables-save text into tables → chains → rules, checking its structure line by line.
// It knows nothing about kube-proxy; iptables.ts gives the rules their meaning.
//
// One pass over the text by character codes: no per-line regular expressions, no split into an
// array of lines, no object a rule. Rules and their options are columns of numbers (offsets into
// the text, IptRules); chains hold rule numbers. Chain and target names are interned by their
// offsets (NameTable), so the 100,000 rules of a large node share one string per chain and cut
// no string out to look one up; at COMMIT every rule is linked to the chain its target names.
import { ParseError } from './parse-error.ts';

/**
 * Every rule of one dump, by number (0, 1, … in the order of the text), as columns of numbers
 * rather than an object a rule: where its line is, where its options are, and its target's name
 * id. Options are four numbers each (name start and end, value start and end; value start -1 for a
 * flag such as `--rcheck`) and one byte of flags. Nothing is cut out of the text until asked for.
 */
export class IptRules {
  /**
   * Per rule: line number, line start, line end, first option, option count, target (name id, -1
   * none, ≤ -2 unescaped), and the chain of its table the target names (index into `chains`, -1 none).
   */
  private rules = new Int32Array(RULE_FIELDS * 1024);
  size = 0;
  /** @internal Option bounds and flags. */
  bounds = new Int32Array(4 * 4096);
  flags = new Uint8Array(4096);
  options = 0;
  /** Targets written with escapes, unescaped (target -2 - k is unescaped[k]). */
  private readonly unescaped: string[] = [];
  /** Every chain of the dump, numbered in the order declared. */
  readonly chains: Chain[] = [];

  constructor(
    readonly text: string,
    private readonly names: string[],
  ) {}

  /** @internal Starts a rule; its options are the ones pushed until `finish`. */
  begin(line: number, start: number, end: number): number {
    if (RULE_FIELDS * (this.size + 1) > this.rules.length) {
      const rules = new Int32Array(this.rules.length * 2);
      rules.set(this.rules);
      this.rules = rules;
    }
    const b = RULE_FIELDS * this.size;
    this.rules[b] = line;
    this.rules[b + 1] = start;
    this.rules[b + 2] = end;
    this.rules[b + 3] = this.options;
    this.rules[b + 5] = -1;
    this.rules[b + 6] = -1;
    return this.size++;
  }

  /** @internal */
  finish(r: number): void {
    this.rules[RULE_FIELDS * r + 4] = this.options - this.rules[RULE_FIELDS * r + 3];
  }

  /** @internal */
  setTarget(r: number, nameId: number): void {
    this.rules[RULE_FIELDS * r + 5] = nameId;
  }

  /** @internal A target that had escapes, kept as its unescaped text. */
  setUnescapedTarget(r: number, name: string): void {
    this.rules[RULE_FIELDS * r + 5] = -2 - this.unescaped.length;
    this.unescaped.push(name);
  }

  /** @internal */
  push(nameStart: number, nameEnd: number, valueStart: number, valueEnd: number, flags: number): void {
    if (this.options === this.flags.length) {
      const bounds = new Int32Array(this.bounds.length * 2);
      bounds.set(this.bounds);
      this.bounds = bounds;
      const f = new Uint8Array(this.flags.length * 2);
      f.set(this.flags);
      this.flags = f;
    }
    const b = 4 * this.options;
    this.bounds[b] = nameStart;
    this.bounds[b + 1] = nameEnd;
    this.bounds[b + 2] = valueStart;
    this.bounds[b + 3] = valueEnd;
    this.flags[this.options++] = flags;
  }

  /** The line number of rule `r`. */
  line(r: number): number {
    return this.rules[RULE_FIELDS * r];
  }

  /** Rule `r`'s line as written. */
  lineText(r: number): string {
    return this.text.slice(this.rules[RULE_FIELDS * r + 1], this.rules[RULE_FIELDS * r + 2]);
  }

  /** The `-j` / `-g` target; the same string for every rule (and chain) of that name. */
  target(r: number): string | null {
    const id = this.rules[RULE_FIELDS * r + 5];
    if (id >= 0) return this.names[id];
    return id === -1 ? null : this.unescaped[-2 - id];
  }

  /** The chain the rule's target names in the rule's own table, or null when the target is not one of its chains. */
  targetChain(r: number): Chain | null {
    const index = this.rules[RULE_FIELDS * r + 6];
    return index < 0 ? null : this.chains[index];
  }

  /**
   * @internal Once a table is complete (COMMIT): links each of its rules, [first, size), to the
   * chain its target names there, whether declared before or after the rule.
   */
  link(first: number, table: IptTable, names: NameTable): void {
    const rules = this.rules;
    for (let r = first; r < this.size; r++) {
      const id = rules[RULE_FIELDS * r + 5];
      if (id >= 0) rules[RULE_FIELDS * r + 6] = names.chainIn(id, table);
      else if (id < -1) {
        const chain = table.chain(this.unescaped[-2 - id]);
        rules[RULE_FIELDS * r + 6] = chain ? this.chains.indexOf(chain) : -1;
      }
    }
  }

  /** The option's value (later options win; "" for a flag), or undefined when the rule does not have it. */
  opt(r: number, name: string): string | undefined {
    const k = this.find(r, name);
    if (k < 0) return undefined;
    const start = this.bounds[4 * k + 2];
    if (start < 0) return '';
    const raw = this.text.slice(start, this.bounds[4 * k + 3]);
    return this.flags[k] & ESCAPED ? unescape(raw) : raw;
  }

  has(r: number, name: string): boolean {
    return this.find(r, name) >= 0;
  }

  /** Whether the option was written after "!" (`! -s 10.244.0.0/16`). */
  negated(r: number, name: string): boolean {
    const k = this.find(r, name);
    return k >= 0 && (this.flags[k] & NEGATED) !== 0;
  }

  /** The index of rule `r`'s last option named `name`, or -1. */
  private find(r: number, name: string): number {
    const { bounds, text } = this;
    const length = name.length;
    // The last character tells most same-length names apart (-d, -p, -s, -m) without a call.
    const last = name.charCodeAt(length - 1);
    const first = this.rules[RULE_FIELDS * r + 3];
    for (let k = first + this.rules[RULE_FIELDS * r + 4] - 1; k >= first; k--) {
      const start = bounds[4 * k];
      const end = bounds[4 * k + 1];
      if (end - start === length && text.charCodeAt(end - 1) === last && text.startsWith(name, start)) return k;
    }
    return -1;
  }
}

const RULE_FIELDS = 7;
const SLOT_FIELDS = 4;
const NEGATED = 1;
const ESCAPED = 2;

/** A chain: its rules are numbers into the dump's IptRules, in order. */
export interface IptChain {
  name: string;
  line: number;
  rules: number[];
}
type Chain = IptChain;

/**
 * Every chain and target name of one dump, once: looked up by its offsets in the text, so a name
 * the dump repeats (each rule names its chain and its target) is neither cut out nor hashed as a
 * new string again. Open addressing over a power-of-two table; each slot keeps the name's hash, id
 * and first place in the text, so a look-up compares the text with itself and touches no string.
 */
class NameTable {
  /** Per slot: hash, id + 1 (0 = empty), start and end of the name's first occurrence in the text. */
  private slots = new Int32Array(SLOT_FIELDS << 12);
  private mask = (1 << 12) - 1;
  readonly names: string[] = [];
  /** The chain each name is declared as in the table being read (null when it is not one of its chains). */
  private readonly chains: number[] = [];
  private readonly chainTables: Array<IptTable | null> = [];

  constructor(private readonly text: string) {}

  /** The id of text[start, end), interned on first sight. */
  id(start: number, end: number): number {
    const t = this.text;
    let h = 0x811c9dc5;
    for (let i = start; i < end; i++) h = Math.imul(h ^ t.charCodeAt(i), 0x01000193);
    const slots = this.slots;
    const length = end - start;
    for (let s = h & this.mask; ; s = (s + 1) & this.mask) {
      const b = SLOT_FIELDS * s;
      const id = slots[b + 1] - 1;
      if (id < 0) return this.add(s, h, start, end);
      if (slots[b] !== h) continue;
      const other = slots[b + 2];
      if (slots[b + 3] - other !== length) continue;
      if (sameRun(t, start, other, length)) return id;
    }
  }

  private add(slot: number, hash: number, start: number, end: number): number {
    const id = this.names.length;
    this.names.push(this.text.slice(start, end));
    this.chains.push(-1);
    this.chainTables.push(null);
    const b = SLOT_FIELDS * slot;
    this.slots[b] = hash;
    this.slots[b + 1] = id + 1;
    this.slots[b + 2] = start;
    this.slots[b + 3] = end;
    if (2 * this.names.length > this.mask) this.grow();
    return id;
  }

  private grow(): void {
    const old = this.slots;
    const slots = new Int32Array(2 * old.length);
    const mask = 2 * (this.mask + 1) - 1;
    for (let b = 0; b < old.length; b += SLOT_FIELDS) {
      if (old[b + 1] === 0) continue;
      let s = old[b] & mask;
      while (slots[SLOT_FIELDS * s + 1] !== 0) s = (s + 1) & mask;
      for (let f = 0; f < SLOT_FIELDS; f++) slots[SLOT_FIELDS * s + f] = old[b + f];
    }
    this.slots = slots;
    this.mask = mask;
  }

  /** Name `id` is the chain numbered `chain` in `table` (a later declaration replaces an earlier one). */
  declare(id: number, table: IptTable, chain: number): void {
    this.chains[id] = chain;
    this.chainTables[id] = table;
  }

  /** The chain `id` names in `table`, or null when the table did not declare it. */
  chainIn(id: number, table: IptTable): number {
    return this.chainTables[id] === table ? this.chains[id] : -1;
  }
}

/** One `*table`: its chains in the order declared (a chain declared again takes the first one's place). */
export class IptTable {
  readonly chains: Chain[] = [];

  constructor(readonly name: string) {}

  /** The chain named `name`, or undefined. A scan: callers ask for a few built-in chains by name, rules are linked already. */
  chain(name: string): Chain | undefined {
    return this.chains.find((c) => c.name === name);
  }
}

export interface IptSave {
  tables: Map<string, IptTable>;
  rules: IptRules;
  ruleCount: number;
}

// Options iptables-save prints without a value. Everything else takes exactly one.
const FLAG_OPTIONS = [
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
];

/** Whether text[start, end) is one of FLAG_OPTIONS, compared in place (no string cut out). */
function isFlagOption(text: string, start: number, end: number): boolean {
  const length = end - start;
  if (length < 5 || text.charCodeAt(start + 1) !== DASH) return false;
  for (const flag of FLAG_OPTIONS) if (flag.length === length && text.startsWith(flag, start)) return true;
  return false;
}

const RESTORE_COMMANDS = 'INXFDRZP';
const SPACE = 32;
const TAB = 9;
const CR = 13;
const QUOTE = 34;
const BACKSLASH = 92;
const HASH = 35;
const STAR = 42;
const COLON = 58;
const DASH = 45;
const BANG = 33;
const isBlank = (c: number) => c === SPACE || c === TAB;
const isDigit = (c: number) => c >= 48 && c <= 57;
const isLower = (c: number) => c >= 97 && c <= 122;

export function readIptablesSave(text: string): IptSave {
  const tables = new Map<string, IptTable>();
  const reader = new LineReader(text);
  let current: IptTable | null = null;
  let openedAt = 0;
  let tableFirstRule = 0;
  let ruleCount = 0;

  for (let lineNo = 1; reader.next(); lineNo++) {
    const { start, end } = reader; // trimmed bounds of the line
    if (start === end) continue;
    const first = text.charCodeAt(start);
    if (first === HASH) continue;
    if (first === STAR) {
      if (current)
        throw new ParseError(`table *${current.name} (opened on line ${openedAt}) is not closed by COMMIT`, lineNo, reader.raw());
      for (let i = start + 1; i < end; i++) if (!isLower(text.charCodeAt(i))) throw new ParseError('bad table name', lineNo, reader.raw());
      if (end === start + 1) throw new ParseError('bad table name', lineNo, reader.raw());
      const name = text.slice(start + 1, end);
      current = new IptTable(name);
      openedAt = lineNo;
      tableFirstRule = reader.rules.size;
      tables.set(name, current);
      continue;
    }
    if (!current) throw new ParseError('rule or chain outside a table: is this iptables-save output?', lineNo, reader.raw());
    if (end - start === 6 && text.startsWith('COMMIT', start)) {
      reader.commit(tableFirstRule, current);
      current = null;
      continue;
    }
    if (first === COLON) {
      if (!reader.chainDeclaration(lineNo, current)) throw new ParseError('bad chain declaration', lineNo, reader.raw());
      continue;
    }
    if (first === DASH && end - start > 3 && text.charCodeAt(start + 1) === 65 /* A */ && text.charCodeAt(start + 2) === SPACE) {
      reader.rule(lineNo, current);
      ruleCount++;
      continue;
    }
    // -I -N -X -F -D -R -Z -P: commands of iptables-restore, not lines iptables-save prints.
    if (first === DASH && end - start > 1) {
      const letter = text[start + 1];
      if (letter === 'X' || (RESTORE_COMMANDS.includes(letter) && text.charCodeAt(start + 2) === SPACE)) {
        throw new ParseError('this is iptables-restore input, not iptables-save output', lineNo, reader.raw());
      }
    }
    throw new ParseError('unrecognised line', lineNo, reader.raw());
  }
  if (current) throw new ParseError(`table *${current.name} is not closed by COMMIT (truncated output?)`, openedAt, `*${current.name}`);
  return { tables, rules: reader.rules, ruleCount };
}

/** Walks the text line by line, keeping the current line's bounds (raw and trimmed) as numbers. */
class LineReader {
  private pos = 0;
  /** The raw line: [rawStart, rawEnd), without its \n (and \r). */
  private rawStart = 0;
  private rawEnd = 0;
  /** The line without surrounding blanks. */
  start = 0;
  end = 0;

  private readonly names: NameTable;
  readonly rules: IptRules;

  constructor(private readonly text: string) {
    this.names = new NameTable(text);
    this.rules = new IptRules(text, this.names.names);
  }

  next(): boolean {
    const t = this.text;
    if (this.pos > t.length) return false;
    let nl = t.indexOf('\n', this.pos);
    if (nl < 0) nl = t.length;
    this.rawStart = this.pos;
    this.rawEnd = nl > this.pos && t.charCodeAt(nl - 1) === CR ? nl - 1 : nl;
    this.pos = nl + 1;
    let s = this.rawStart;
    let e = this.rawEnd;
    while (s < e && isBlank(t.charCodeAt(s))) s++;
    while (e > s && isBlank(t.charCodeAt(e - 1))) e--;
    this.start = s;
    this.end = e;
    return true;
  }

  /** Per chain of the dump (as numbered in `rules.chains`): its place in its table's `chains`. */
  private readonly tablePlaces: number[] = [];

  /** The table is complete: its rules learn which of its chains their targets are. */
  commit(firstRule: number, table: IptTable): void {
    this.rules.link(firstRule, table, this.names);
  }

  raw(): string {
    return this.text.slice(this.rawStart, this.rawEnd);
  }

  /** `:NAME POLICY [packets:bytes]`: declares NAME in `table`; false when the line is not of that shape. */
  chainDeclaration(lineNo: number, table: IptTable): boolean {
    const t = this.text;
    const nameEnd = this.word(this.start + 1);
    if (nameEnd === this.start + 1 || t.charCodeAt(nameEnd) !== SPACE) return false;
    const policyEnd = this.word(nameEnd + 1);
    if (policyEnd === nameEnd + 1 || t.charCodeAt(policyEnd) !== SPACE) return false;
    // [digits:digits] to the end of the line
    let i = policyEnd + 1;
    if (t.charCodeAt(i) !== 91 /* [ */) return false;
    let j = this.digits(++i);
    if (j === i || t.charCodeAt(j) !== COLON) return false;
    i = j + 1;
    j = this.digits(i);
    if (j === i || t.charCodeAt(j) !== 93 /* ] */ || j + 1 !== this.end) return false;
    const id = this.names.id(this.start + 1, nameEnd);
    const name = this.names.names[id];
    const chain: Chain = { name, line: lineNo, rules: [] };
    const again = this.names.chainIn(id, table);
    if (again < 0) this.tablePlaces.push(table.chains.push(chain) - 1);
    else {
      const place = this.tablePlaces[again];
      table.chains[place] = chain;
      this.tablePlaces.push(place);
    }
    this.names.declare(id, table, this.rules.chains.push(chain) - 1);
    this.lastChain = null; // a chain declared again replaces the one a rule before may have named
    return true;
  }

  /** The end of the run of digits that starts at `from`. */
  private digits(from: number): number {
    let j = from;
    while (j < this.end && isDigit(this.text.charCodeAt(j))) j++;
    return j;
  }

  /** The end of the non-blank run that starts at `from`. */
  private word(from: number): number {
    let i = from;
    while (i < this.end && !isBlank(this.text.charCodeAt(i))) i++;
    return i;
  }

  private fail(lineNo: number, message: string): ParseError {
    return new ParseError(message, lineNo, this.raw());
  }

  /** The end of the token at `from` in a rule: rules split on spaces only, as iptables-save writes them. */
  private token(from: number): number {
    const space = this.text.indexOf(' ', from);
    return space < 0 || space > this.end ? this.end : space;
  }

  /** Where the next backslash at or after `from` is (the text's length when there is none), kept across lines. */
  private backslashAt = -1;
  private nextBackslash(from: number): number {
    if (this.backslashAt < from) {
      const b = this.text.indexOf('\\', from);
      this.backslashAt = b < 0 ? this.text.length : b;
    }
    return this.backslashAt;
  }

  /**
   * The chain text[start, end) names in `table`. iptables-save prints a chain's rules together,
   * so most rules name the chain of the rule before: that is compared in place, in the text.
   */
  private lastChain: Chain | null = null;
  private lastTable: IptTable | null = null;
  private lastChainStart = 0;
  private lastChainEnd = 0;
  private chainAt(start: number, end: number, table: IptTable): Chain | null {
    const last = this.lastChain;
    const length = end - start;
    if (last && this.lastTable === table && this.lastChainEnd - this.lastChainStart === length) {
      if (sameRun(this.text, start, this.lastChainStart, length)) return last;
    }
    const index = this.names.chainIn(this.names.id(start, end), table);
    const found = index < 0 ? null : this.rules.chains[index];
    this.lastChain = found;
    this.lastTable = table;
    this.lastChainStart = start;
    this.lastChainEnd = end;
    return found;
  }

  /**
   * The name id of a target at text[start, end). Rules repeat a few targets (KUBE-MARK-MASQ, DNAT)
   * over and over: the last two seen are compared in place, in the recent text, before the table.
   */
  private recentTargets = [-1, -1];
  private recentStarts = [0, 0];
  private recentEnds = [0, 0];
  private targetId(start: number, end: number): number {
    const t = this.text;
    const length = end - start;
    for (let n = 0; n < 2; n++) {
      const other = this.recentStarts[n];
      if (this.recentTargets[n] < 0 || this.recentEnds[n] - other !== length) continue;
      if (sameRun(t, start, other, length)) {
        // Compare with this newest copy next time: it is still in the cache.
        this.recentStarts[n] = start;
        this.recentEnds[n] = end;
        return this.recentTargets[n];
      }
    }
    const id = this.names.id(start, end);
    // The newer of the two moves to the second place; this one takes the first.
    this.recentTargets[1] = this.recentTargets[0];
    this.recentStarts[1] = this.recentStarts[0];
    this.recentEnds[1] = this.recentEnds[0];
    this.recentTargets[0] = id;
    this.recentStarts[0] = start;
    this.recentEnds[0] = end;
    return id;
  }

  /**
   * An `-A CHAIN …` line, tokenised and read into a rule in the same pass. The chain (and a target
   * that is a chain) is looked up once in the table, and the table's own string is kept.
   */
  rule(lineNo: number, table: IptTable): void {
    const t = this.text;
    const end = this.end;
    const store = this.rules;
    let i = this.start + 3;
    while (i < end && t.charCodeAt(i) === SPACE) i++;
    const chainEnd = this.token(i);
    if (chainEnd === i) throw this.fail(lineNo, 'rule without a chain');
    const declared = this.chainAt(i, chainEnd, table);
    if (!declared) throw this.fail(lineNo, `rule for undeclared chain ${t.slice(i, chainEnd)}`);
    const rule = store.begin(lineNo, this.rawStart, this.rawEnd);
    i = chainEnd;
    let negate = false;
    let nameStart = -1;
    let nameEnd = -1;
    while (i < end) {
      while (i < end && t.charCodeAt(i) === SPACE) i++;
      if (i >= end) break;
      // One token: a quoted string (with \" and \\ escapes, as iptables-save writes them) or a word.
      let valueStart: number;
      let valueEnd: number;
      let escaped = false;
      if (t.charCodeAt(i) === QUOTE) {
        let j = t.indexOf('"', i + 1);
        if (j < 0 || j >= end) j = end;
        if (this.nextBackslash(i + 1) < j) {
          // Escapes inside: walk the quoted string character by character.
          escaped = true;
          j = i + 1;
          while (j < end) {
            const c = t.charCodeAt(j);
            if (c === BACKSLASH && j + 1 < end) {
              j += 2;
              continue;
            }
            if (c === QUOTE) break;
            j++;
          }
        }
        if (j >= end) throw this.fail(lineNo, 'unterminated quote');
        valueStart = i + 1;
        valueEnd = j;
        i = j + 1;
        if (nameStart < 0) throw this.fail(lineNo, `unexpected value ${JSON.stringify(unescape(t.slice(valueStart, valueEnd)))}`);
      } else {
        const j = this.token(i);
        if (nameStart < 0) {
          if (j === i + 1 && t.charCodeAt(i) === BANG) negate = true;
          else if (t.charCodeAt(i) !== DASH) throw this.fail(lineNo, `unexpected value ${JSON.stringify(t.slice(i, j))}`);
          else if (isFlagOption(t, i, j)) {
            store.push(i, j, -1, -1, negate ? NEGATED : 0);
            negate = false;
          } else {
            nameStart = i;
            nameEnd = j;
          }
          i = j;
          continue;
        }
        valueStart = i;
        valueEnd = j;
        i = j;
      }
      // The token is the value of the option before it.
      const letter = nameEnd - nameStart === 2 ? t.charCodeAt(nameStart + 1) : 0;
      if (letter === 106 /* -j */ || letter === 103 /* -g */) {
        if (escaped) store.setUnescapedTarget(rule, unescape(t.slice(valueStart, valueEnd)));
        else store.setTarget(rule, this.targetId(valueStart, valueEnd));
      } else store.push(nameStart, nameEnd, valueStart, valueEnd, (negate ? NEGATED : 0) | (escaped ? ESCAPED : 0));
      negate = false;
      nameStart = -1;
    }
    if (nameStart >= 0) throw this.fail(lineNo, `option ${t.slice(nameStart, nameEnd)} has no value`);
    store.finish(rule);
    declared.rules.push(rule);
  }
}

/** Whether text[a, a + length) and text[b, b + length) are the same characters. */
function sameRun(text: string, a: number, b: number, length: number): boolean {
  for (let k = 0; k < length; k++) if (text.charCodeAt(a + k) !== text.charCodeAt(b + k)) return false;
  return true;
}

function unescape(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) === BACKSLASH && i + 1 < s.length) i++;
    out += s[i];
  }
  return out;
}
