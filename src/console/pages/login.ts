import type { ConsoleContext } from '../context.js';
import { html, sentBack } from '../html.js';
import { page } from '../layout.js';

/**
 * A page of this console to go to after signing in: a path under its prefix as a request line
 * carries it (printable ASCII, percent-encoded), never another site (`//host`, `/\\host`).
 */
export function consolePath(context: ConsoleContext, path: unknown): string | undefined {
  if (typeof path !== 'string' || !path.startsWith(`${context.prefix}/`) || path.startsWith('//') || !/^[\x21-\x7e]+$/.test(path) || path.includes('\\'))
    return undefined;
  return path;
}

/**
 * Sign-in for every browser when a token is configured (this machine's too): the token is posted once and a session cookie kept.
 * `next`: the console page that was asked for (an alert's link), opened once signed in.
 */
export function loginPage(context: ConsoleContext, message: string, next?: string): string {
  const body = html`
<div class="card"><p id="refusal">${message}</p>
${
  context.token === undefined
    ? html`<p class="muted">No CHECKOUT_CONSOLE_TOKEN is configured, so only this machine can open the console (for example through <code>ssh -L</code>).</p>`
    : html`<form method="post" action="${context.prefix}/login">${next === undefined ? '' : html`<input type="hidden" name="next" value="${sentBack(next)}">`}<p><label for="token">console token (CHECKOUT_CONSOLE_TOKEN)</label><input type="password" id="token" name="token" autocomplete="current-password" required></p><p><button type="submit">Sign in</button></p></form>`
}</div>`;
  return page(context, { title: 'Sign in', section: undefined, body, public: true });
}
