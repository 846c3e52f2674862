/** Escapes for the control characters that have a short one; the rest are written `\u00XX`. */
const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `text` with its control characters written as escapes (`\n`, `\u001b`), for one line of output:
 * ids and types come from outside, and a raw line break would split a table's row, an escape
 * sequence reach the operator's terminal; a parser's quote of a damaged file may hold a line break,
 * and the CLI prints an error's first line only, which cut such a message off before its advice.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (char) => SHORT_ESCAPES[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
