// Thrown for input a parser does not understand, so a caller can show the exact offending line
// instead of an empty (and misleading) model.
export class ParseError extends Error {
  readonly line: number;
  readonly text: string;

  constructor(message: string, line: number, text: string) {
    const shown = text.length > 160 ? `${text.slice(0, 157)}...` : text;
    super(line > 0 ? `${message} (line ${line}: ${JSON.stringify(shown)})` : message);
    this.name = 'ParseError';
    this.line = line;
    this.text = text;
  }
}
