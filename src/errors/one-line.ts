/**
 * `text` on one line, its line breaks written `\n` (as JSON would). For what goes inside a
 * one-line error: a parser's quote of a damaged file may hold a line break, and the CLI prints
 * an error's first line only, which cut such a message off mid-quote, before its advice.
 */
export function oneLine(text: string): string {
  return text.replace(/\r\n|\r|\n/g, (line) => JSON.stringify(line).slice(1, -1));
}
