import { redact } from '../errors/index.js';
import type { ConsoleContext } from './context.js';
import { prose } from './format.js';
import { html, raw, type HtmlValue, type SafeHtml } from './html.js';
import { LOCAL_TIMES_SCRIPT } from './local-times.js';
import { STYLE } from './style.js';

/** The sections of the navigation bar. */
export type Section = 'overview' | 'events' | 'payments' | 'invoices' | 'runs' | 'dead-letters' | 'merchants' | 'log';

const NAV: Record<Section, { label: string; path: string }> = {
  overview: { label: 'Overview', path: '/' },
  events: { label: 'Events', path: '/events' },
  payments: { label: 'Payments', path: '/payments' },
  invoices: { label: 'Invoices', path: '/invoices' },
  runs: { label: 'Runs', path: '/runs' },
  'dead-letters': { label: 'Dead letters', path: '/dead-letters' },
  merchants: { label: 'Merchants', path: '/merchants' },
  log: { label: 'Log', path: '/log' },
};

export interface PageInput {
  title: string;
  section: Section | undefined;
  body: HtmlValue;
  notice?: { tone: 'ok' | 'error' | 'info'; text: HtmlValue } | undefined;
  /** Shown to whoever asks (the sign-in page): no navigation, no store description. */
  public?: boolean;
}

/**
 * A whole page. The final text goes through `redact` too: a key-shaped string inside a stored body
 * (or anywhere else) never reaches the browser, whatever a page forgot.
 */
export function page(context: ConsoleContext, input: PageInput): string {
  const link = (section: Section) => {
    const { label, path } = NAV[section];
    return html`<a href="${context.prefix}${path === '/' ? '/' : path}" class="${section === input.section ? 'active' : ''}">${label}</a>`;
  };
  const document: SafeHtml = html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="same-origin">
<title>${input.title} · checkout-kit</title><style>${raw(STYLE)}</style></head>
<body>
<header><span class="brand">checkout-kit</span>${input.public ? '' : html`<nav>${(Object.keys(NAV) as Section[]).map(link)}</nav><span class="store" title="${context.store.description}">${context.store.description}</span>`}${
    // Signed in with the token: the session cookie is HttpOnly, so only the console can end it.
    input.public || context.token === undefined
      ? ''
      : html`<form class="signout" method="post" action="${context.prefix}/logout"><button type="submit" id="sign-out">Sign out</button></form>`
  }</header>
<main>
<h1>${prose(input.title)}</h1>
${input.notice ? html`<div class="notice ${input.notice.tone}" id="notice">${input.notice.text}</div>` : ''}
${input.body}
</main>
<script>${raw(LOCAL_TIMES_SCRIPT)}</script>
</body>
</html>`;
  return redact(document.value);
}

/** A link inside the console. */
export const href = (context: ConsoleContext, path: string, query: Record<string, string | number | undefined> = {}) => {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(key, String(value));
  const search = params.toString();
  return `${context.prefix}${path}${search ? `?${search}` : ''}`;
};
