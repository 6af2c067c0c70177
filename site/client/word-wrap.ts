/**
 * Text the page itself writes into a terminal (the runner's notice, a closed socket, a refused
 * terminal), broken into lines at word boundaries for the terminal's column count. xterm would
 * break a long line at the last column, mid-word; at the projector's font size that is every
 * line. What is written once is not re-wrapped when the terminal is resized later.
 */

/**
 * `text` as lines of at most `cols` characters, broken at spaces, joined with CRLF (a terminal
 * needs the carriage return). Line breaks already in `text` stay; runs of spaces inside a line
 * collapse where a line breaks; a word longer than a line (a URL) is cut at the column, the
 * only place a word is broken. A character is one column (the page writes no wide characters).
 */
export function wrapWords(text: string, cols: number): string {
  const width = Math.max(1, Math.floor(cols));
  return text
    .split(/\r?\n/)
    .map((line) => wrapLine(line, width).join('\r\n'))
    .join('\r\n');
}

function wrapLine(line: string, width: number): string[] {
  const out: string[] = [];
  let current: string[] = [];
  for (const word of line.split(' ').filter((w) => w !== '')) {
    let chars = [...word];
    const room = current.length ? width - current.length - 1 : width;
    if (chars.length > room && current.length) {
      out.push(current.join(''));
      current = [];
    }
    while (chars.length > width) {
      out.push(chars.slice(0, width).join(''));
      chars = chars.slice(width);
    }
    if (current.length) current.push(' ');
    current.push(...chars);
  }
  out.push(current.join(''));
  return out;
}
