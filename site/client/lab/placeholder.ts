/**
 * A snippet whose command holds a placeholder (`<mode>`, `<count>`, `<ClusterIP>`) is for the
 * learner to finish, never to run as written: bash would read `<mode>` as a redirection, or the
 * literal `<mode>` would be stored as their answer. Run on such a snippet types the command
 * WITHOUT Enter and leaves the cursor right after the first placeholder, so Backspace erases it
 * (xterm has no selection a shell's line editor would overwrite). Used at build time
 * (LabSnippet.astro: the button says "Type") and in the page (lab-panel.ts).
 */

/**
 * `<word>`, `<a few words>` or `<ip:port ip:port>`: a letter first, then letters, digits, `:._-`
 * or single spaces; `<<EOF`, `2>&1` and `a < b` are not placeholders.
 */
const PLACEHOLDER = /(?<![<\w])<[A-Za-z][\w:.-]*(?: [\w:.-]+)*>(?![>&])/g;

/** Every placeholder in `command`, in order, e.g. `['<ClusterIP>', '<scheduler>']`. */
export function placeholdersIn(command: string): string[] {
  return [...command.matchAll(PLACEHOLDER)].map((m) => m[0]);
}

/** The shell line editor's key for "cursor one character left" (readline, zsh, fish alike). */
export const CURSOR_LEFT = '\x1b[D';

/**
 * What to send to the shell for `command`: with no placeholder, the command and Enter; with
 * one, the command, then the cursor moved back to just after the first placeholder, and no Enter.
 */
export function keysFor(command: string): { text: string; execute: boolean } {
  const first = new RegExp(PLACEHOLDER.source).exec(command);
  if (!first) return { text: command, execute: true };
  const after = command.length - (first.index + first[0].length);
  return { text: command + CURSOR_LEFT.repeat([...command.slice(command.length - after)].length), execute: false };
}

/**
 * `command` as the words a snippet shows, each cut into plain text and placeholders: a
 * placeholder with spaces (`<count on worker>`) stays inside one word, so it is marked whole.
 */
export function snippetWords(command: string): { text: string; placeholder: boolean }[][] {
  const words: { text: string; placeholder: boolean }[][] = [];
  let word: { text: string; placeholder: boolean }[] = [];
  let at = 0;
  const plain = (text: string) => {
    for (const bit of text.split(/(\s+)/)) {
      if (!bit) continue;
      if (/^\s/.test(bit)) {
        if (word.length) words.push(word);
        words.push([{ text: bit, placeholder: false }]);
        word = [];
      } else word.push({ text: bit, placeholder: false });
    }
  };
  for (const m of command.matchAll(PLACEHOLDER)) {
    plain(command.slice(at, m.index));
    word.push({ text: m[0], placeholder: true });
    at = m.index + m[0].length;
  }
  plain(command.slice(at));
  if (word.length) words.push(word);
  return words;
}
