// wrapWords breaks what the page writes into a terminal at spaces, never inside a word that fits.
import { describe, expect, it } from 'vitest';
import { wrapWords } from './word-wrap.ts';

const NOTICE =
  'The iptables cluster cannot be checked: Docker is not running: the docker CLI is installed, but no Docker daemon (engine) answers. ' +
  'Start Docker: open Docker Desktop, or on Linux run `sudo systemctl start docker` (and add yourself to the `docker` group so ' +
  '`docker ps` works without sudo). If this machine has no Docker Engine at all, install one: https://docs.docker.com/engine/install/ (or Docker Desktop).';

describe('wrapWords', () => {
  it('breaks at spaces, every line within the columns, the words kept whole and in order', () => {
    // From 41 columns (the URL, the longest word, is 40 characters) to a laptop's.
    for (const cols of [41, 52, 64, 80, 120]) {
      const lines = wrapWords(NOTICE, cols).split('\r\n');
      for (const line of lines) {
        expect(line.length, `${cols} columns: "${line}"`).toBeLessThanOrEqual(cols);
        expect(line).toBe(line.trim());
      }
      // Rejoined with spaces, the text is the notice again: no word was cut.
      expect(lines.join(' '), `${cols} columns`).toBe(NOTICE);
      // Greedy: the next line's first word would not have fitted on this one.
      for (let i = 0; i + 1 < lines.length; i++) expect(lines[i].length + 1 + lines[i + 1].split(' ')[0].length).toBeGreaterThan(cols);
    }
  });

  it('at 41 columns, as the projector shows it at 1280 px', () => {
    expect(wrapWords(NOTICE, 41).split('\r\n').slice(0, 3)).toEqual([
      'The iptables cluster cannot be checked:',
      'Docker is not running: the docker CLI is',
      'installed, but no Docker daemon (engine)',
    ]);
  });

  it('a line that fits stays as it is; a word of exactly the width fills its line', () => {
    expect(wrapWords('kubectl will work', 80)).toBe('kubectl will work');
    expect(wrapWords('abcd efgh ij', 4)).toBe('abcd\r\nefgh\r\nij');
  });

  it('cuts only a word longer than a line, at the column', () => {
    expect(wrapWords('see https://docs.docker.com/engine/install/ now', 16)).toBe(
      'see\r\nhttps://docs.doc\r\nker.com/engine/i\r\nnstall/ now',
    );
  });

  it('keeps the line breaks of the text (a late notice starts on a fresh line)', () => {
    expect(wrapWords('\r\nThe iptables cluster is not running.', 20)).toBe('\r\nThe iptables cluster\r\nis not running.');
    expect(wrapWords('one\ntwo three', 5)).toBe('one\r\ntwo\r\nthree');
  });

  it('collapses the spaces where it breaks, and survives a width of zero or less', () => {
    expect(wrapWords('a    b', 3)).toBe('a b');
    expect(wrapWords('ab  cd', 3)).toBe('ab\r\ncd');
    expect(wrapWords('abc', 0)).toBe('a\r\nb\r\nc');
  });
});
