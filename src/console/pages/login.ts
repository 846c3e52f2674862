import type { ConsoleContext } from '../context.js';
import { html } from '../html.js';
import { page } from '../layout.js';

/** Sign-in for every browser when a token is configured (this machine's too): the token is posted once and a session cookie kept. */
export function loginPage(context: ConsoleContext, message: string): string {
  const body = html`
<div class="card"><p id="refusal">${message}</p>
${
  context.token === undefined
    ? html`<p class="muted">No CHECKOUT_CONSOLE_TOKEN is configured, so only this machine can open the console (for example through <code>ssh -L</code>).</p>`
    : html`<form method="post" action="${context.prefix}/login"><p><label for="token">console token (CHECKOUT_CONSOLE_TOKEN)</label><input type="password" id="token" name="token" autocomplete="current-password" required></p><p><button type="submit">Sign in</button></p></form>`
}</div>`;
  return page(context, { title: 'Sign in', section: undefined, body, public: true });
}
