/** Escapes for the control characters that have a short one; the rest are written `\u00XX`. */
const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Unicode's bidirectional controls: the embeddings and overrides (U+202A–U+202E), the isolates
 * (U+2066–U+2069) and the marks (U+200E, U+200F, U+061C). Invisible themselves, they reorder the
 * text around them on screen, so that an id from outside can read as another ("Trojan Source").
 */
const BIDI_CONTROLS = [0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069];

const hex = (code: number) => code.toString(16).padStart(4, '0');
const escape = (char: string) => SHORT_ESCAPES[char] ?? `\\u${hex(char.charCodeAt(0))}`;
const BIDI_CLASS = BIDI_CONTROLS.map((code) => `\\u${hex(code)}`).join('');
const CONTROL = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${BIDI_CLASS}]`, 'g');
const BIDI_CONTROL = new RegExp(`[${BIDI_CLASS}]`, 'g');
// A carriage return ending a line (CRLF) is layout; one alone would return to the line's start and print over it.
const CONTROL_BUT_LAYOUT = new RegExp(`\\r(?!\\n)|[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f${BIDI_CLASS}]`, 'g');
const BIDI_ESCAPE = new RegExp(`\\\\u(${BIDI_CONTROLS.map(hex).join('|')})`, 'gi');

/**
 * `text` with its control characters written as escapes (`\n`, `\u001b`, `\u202e`), for one line of
 * output: ids and types come from outside, and a raw line break would split a table's row, an escape
 * sequence reach the operator's terminal, a bidirectional control show the text reordered; a
 * parser's quote of a damaged file may hold a line break, and the CLI prints an error's first line
 * only, which cut such a message off before its advice.
 */
export function printable(text: string): string {
  return text.replace(CONTROL, escape);
}

/**
 * `text` with its bidirectional controls written as `printable` writes them (`\u202e`), the rest
 * as it is: for what keeps its line breaks (the console, whose markup lays them out).
 */
export function showBidiControls(text: string): string {
  return text.replace(BIDI_CONTROL, escape);
}

/**
 * `text` with its control characters written as `printable` writes them, but for its line breaks
 * (LF or CRLF) and tabs: for what the CLI prints over several lines (an event's details and raw body), where a
 * stored byte must neither reach the terminal as an escape sequence nor reorder what is shown.
 */
export function terminalText(text: string): string {
  return text.replace(CONTROL_BUT_LAYOUT, escape);
}

/**
 * What an operator typed with the escapes `showBidiControls` shows (`\u202e`, in either case) read
 * back as the controls themselves: an id copied from a page finds what the page showed.
 */
export function readBidiEscapes(text: string): string {
  return text.replace(BIDI_ESCAPE, (_escaped, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
