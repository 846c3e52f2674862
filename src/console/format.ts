import { html, type HtmlValue, type SafeHtml } from './html.js';

/** How long ago `iso` was, on the console's clock: `42 s`, `5 min`, `3 h`, `2 d` (a no-break space keeps number and unit on one line). */
export function age(iso: string | undefined, now: Date): string {
  if (iso === undefined) return '—';
  const ms = now.getTime() - Date.parse(iso);
  if (Number.isNaN(ms)) return '—';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}\u00a0s`;
  if (s < 7200) return `${Math.round(s / 60)}\u00a0min`;
  if (s < 172_800) return `${Math.round(s / 3600)}\u00a0h`;
  return `${Math.round(s / 86_400)}\u00a0d`;
}

/** `2031-03-04 10:00:00 UTC`: the console's one way of writing a time (seconds are what an operator compares). */
const utc = (date: Date) => `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;

/** Date, clock and zone each kept on one line: a narrow box wraps between them, never inside the date. */
const parts = (text: string) => html`${text.split(' ').map((part, i) => html`${i > 0 ? ' ' : ''}<span>${part}</span>`)}`;

function parsed(iso: string): Date | undefined {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/**
 * A time, written in UTC so pages are the same for every viewer; the page's script (`local-times.ts`)
 * rewrites the text to the viewer's zone and the title keeps the UTC time.
 */
export function when(iso: string | undefined): SafeHtml | string {
  if (iso === undefined) return '—';
  const date = parsed(iso);
  if (!date) return iso;
  return html`<time datetime="${date.toISOString()}" title="${utc(date)}" data-local>${parts(utc(date))}</time>`;
}

/** `5 min ago`, with the time itself in UTC on hover. */
export function ago(iso: string | undefined, now: Date): SafeHtml | string {
  const date = iso === undefined ? undefined : parsed(iso);
  if (!date) return '—';
  return html`<time datetime="${date.toISOString()}" title="${utc(date)}">${age(iso, now)} ago</time>`;
}

/**
 * An id (or any token that must not break): one line, ellipsised where its box is too narrow, the
 * whole value in `title` and selected by one click, so a copy takes all of it.
 */
export const id = (value: string): SafeHtml => html`<span class="id" title="${value}">${value}</span>`;

/** Longer than this, a token is wider than a phone's table cell or a narrow line (~200 px). */
const LONG_TOKEN = /\S{30,}/g;

/** Text whose long tokens (ids, URLs, paths inside a sentence) are shown as `id`s instead of overflowing or breaking mid-word. */
export function prose(text: string): SafeHtml {
  const parts: HtmlValue[] = [];
  let from = 0;
  for (const match of text.matchAll(LONG_TOKEN)) {
    parts.push(text.slice(from, match.index), id(match[0]));
    from = match.index + match[0].length;
  }
  parts.push(text.slice(from));
  return html`${parts}`;
}

/** A text cut to about `max` characters at a word, ending in "…", the whole of it in `title`. */
export function clip(text: string, max: number): SafeHtml {
  if (text.length <= max) return prose(text);
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return html`<span title="${text}">${prose((space > max / 2 ? cut.slice(0, space) : cut).trimEnd())}…</span>`;
}

/** Deeper levels are shown at this one's indentation: a hostile body nested 20,000 deep stays a page, not gigabytes of spaces. */
const MAX_INDENT_LEVELS = 20;
/** Past this many characters the text is shown as received, not indented. */
const MAX_INDENTED_CHARS = 1024 * 1024;

/**
 * A JSON text indented for reading, every token kept as written (numbers, escapes, key order and
 * duplicates: parsing and printing again could change what the operator compares); text that is
 * not JSON, or would take more than `MAX_INDENTED_CHARS` indented, is returned unchanged.
 */
export function indentJson(text: string): string {
  try {
    JSON.parse(text);
  } catch {
    return text;
  }
  let out = '';
  let depth = 0;
  let inString = false;
  const newline = () => `\n${'  '.repeat(Math.min(depth, MAX_INDENT_LEVELS))}`;
  /** The first character after `i` that is not white space. */
  const nextToken = (i: number) => {
    let j = i + 1;
    while (j < text.length && /\s/.test(text[j]!)) j++;
    return text[j];
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      out += c;
      inString = true;
    } else if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      if (nextToken(i) === close) {
        out += c + close;
        i = text.indexOf(close, i + 1);
      } else {
        depth++;
        out += c + newline();
      }
    } else if (c === '}' || c === ']') {
      depth--;
      out += newline() + c;
    } else if (c === ',') out += c + newline();
    else if (c === ':') out += ': ';
    else if (!/\s/.test(c)) out += c;
    if (out.length > MAX_INDENTED_CHARS) return text;
  }
  return out;
}

/** Thousands separated, for counts. */
export const count = (n: number) => n.toLocaleString('en-US');
