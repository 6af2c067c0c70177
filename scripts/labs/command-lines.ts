/**
 * A long shell command as a person reads it: one stage of a pipeline a line, each command of a
 * `;` list or a loop's body on a line of its own, and a command still too long broken before
 * its `--options` (or after a bare `--`) where it would run past the line.
 * Only where the shell itself would read the same command: breaks go after a top-level `|`,
 * `&&` or `||`, or replace a top-level `;`, or follow a ` \` before an option; never inside
 * quotes, `$(…)`, backticks, or a `for`/`while` loop's body. A command that is already on
 * several lines, fits, or holds a placeholder for the learner to finish (the page types it
 * and moves the cursor back along one line) is left as it is.
 */

/** Past this many characters a line is too long to take in at once. */
export const READABLE_LINE = 100;

const PLACEHOLDER = /(?<![<\w])<[A-Za-z][\w:.-]*(?: [\w:.-]+)*>(?![>&])/;

interface Cut {
  /** Index in the command where the break goes. */
  at: number;
  /** How many characters at `at` the break replaces (the space after `|`, or `; `). */
  drop: number;
  /** What goes in: a newline and an indent, and for options a line continuation first. */
  insert: string;
}

/** Top-level places where a command can be broken, found by one pass over its quoting. */
function cuts(command: string, kind: 'list' | 'options'): Cut[] {
  const out: Cut[] = [];
  /**
   * What the pass is inside: a double-quoted string, a `$( … )` or `( … )`, a `{ …; }` group, a
   * backtick command; `=` for the `$( … )` that is the whole value of a name (`chain=$(a | b)`),
   * whose pipeline is broken like one at the top.
   */
  const nest: ('"' | '(' | '{' | '`' | '=')[] = [];
  /** The indents of the `for`/`while` loops the pass is in (the indent of the line each `do` is on). */
  const loops: number[] = [];
  /** The indent of the line being built: 2 on a pipeline's next stage, 0 after a `;`. */
  let indent = 0;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    const rest = command.slice(i);
    const inner = nest.at(-1);
    if (c === '\\') {
      i++;
      continue;
    }
    if (inner === '`') {
      if (c === '`') nest.pop();
      continue;
    }
    if (c === '`') {
      nest.push('`');
      continue;
    }
    if (c === '$' && command[i + 1] === '(') {
      const naming = !nest.length && /(^|[;&|]\s*|\b(do|then)\s+)\w+=$/.test(command.slice(0, i));
      nest.push(naming ? '=' : '(');
      i++;
      continue;
    }
    if (inner === '"') {
      if (c === '"') nest.pop();
      continue;
    }
    if (c === '"') {
      nest.push('"');
      continue;
    }
    if (c === "'") {
      const close = command.indexOf("'", i + 1);
      if (close < 0) return [];
      i = close;
      continue;
    }
    if (c === '{' && /^\{\s/.test(rest) && (i === 0 || /\s/.test(command[i - 1]))) nest.push('{');
    else if (c === '}' && inner === '{' && (i === 0 || /[\s;]/.test(command[i - 1]))) nest.pop();
    else if (c === '(') nest.push('(');
    else if (c === ')') {
      // A `case` pattern's `)` or anything else this pass does not follow: leave the command whole.
      const open = nest.pop();
      if (open !== '(' && open !== '=') return [];
      continue;
    }
    if (nest.length && !(nest.length === 1 && nest[0] === '=')) continue;
    if (kind === 'options') {
      // Before an option, or after a bare `--` (what follows is another program's command line).
      if (/^ --[a-z]/.test(rest)) out.push({ at: i, drop: 1, insert: ' \\\n    ' });
      else if (rest.startsWith(' -- ')) out.push({ at: i + 3, drop: 1, insert: ' \\\n    ' });
      continue;
    }
    if (/^; do /.test(rest)) {
      // A loop's body, one command a line, indented under its `for` or `while`.
      loops.push(indent);
      indent += 2;
      out.push({ at: i + 4, drop: 1, insert: `\n${' '.repeat(indent)}` });
      i += 4;
    } else if (/^; done\b/.test(rest) && loops.length) {
      indent = loops.pop()!;
      out.push({ at: i, drop: 2, insert: `\n${' '.repeat(indent)}` });
      i += 5;
    } else if (loops.length) {
      if (rest.startsWith('; ')) {
        out.push({ at: i, drop: 2, insert: `\n${' '.repeat(indent)}` });
        i++;
      }
    } else if (/^(\|\||&&|\|) /.test(rest)) {
      const op = rest.startsWith('|| ') || rest.startsWith('&& ') ? 2 : 1;
      indent = 2;
      out.push({ at: i + op, drop: 1, insert: '\n  ' });
      i += op;
    } else if (rest.startsWith('; ') && !/^; then\b/.test(rest)) {
      indent = 0;
      out.push({ at: i, drop: 2, insert: '\n' });
      i++;
    }
  }
  return out;
}

function apply(command: string, found: Cut[]): string {
  let text = '';
  let from = 0;
  for (const cut of found) {
    text += command.slice(from, cut.at) + cut.insert;
    from = cut.at + cut.drop;
  }
  return text + command.slice(from);
}

/** `command` broken into lines a person can read, as the shell reads the same command. */
export function readableCommand(command: string, max = READABLE_LINE): string {
  if (command.includes('\n') || command.length <= max || PLACEHOLDER.test(command)) return command;
  const lines = apply(command, cuts(command, 'list')).split('\n');
  return lines
    .map((line) => {
      if (line.length <= max) return line;
      const indent = /^ */.exec(line)![0];
      const text = line.slice(indent.length);
      // As few breaks as fit: a break only where the line would grow past `max` without it.
      const chosen: Cut[] = [];
      let start = 0;
      const found = cuts(text, 'options');
      found.forEach((cut, k) => {
        const next = found[k + 1]?.at ?? text.length;
        if (next - start + indent.length + 4 > max) {
          chosen.push(cut);
          start = cut.at + cut.drop;
        }
      });
      return indent + apply(text, chosen).replace(/\n {4}/g, `\n${indent}    `);
    })
    .join('\n');
}
