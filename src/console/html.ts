import { showBidiControls } from '../errors/index.js';

/** HTML that is already safe to send: built by `html`, or vouched for with `raw`. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** What a template may interpolate: text is escaped, `SafeHtml` is kept, lists are joined, nothing renders empty. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Escape text for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] as string);
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  // Bidirectional controls shown as escapes (`\u202e`), as the CLI prints them: invisible, they
  // would reorder an id on screen so that it reads as another.
  return escapeHtml(showBidiControls(String(value)));
}

/**
 * The console's only way to build markup: every interpolated value is escaped unless it is
 * `SafeHtml`, so a stored event (untrusted input) can never become markup, nor a bidirectional
 * control in it reorder what the operator reads.
 * @example html`<td>${event.type}</td>` // `<script>` in the type renders as text
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

/** Markup the caller vouches for (constant strings of the console itself). */
export const raw = (markup: string) => new SafeHtml(markup);

/**
 * A form field's value that the browser sends back and never shows (a hidden field): escaped for
 * the attribute only, so an id comes back as stored, its bidirectional controls included.
 */
export const sentBack = (value: string) => new SafeHtml(escapeHtml(value));
