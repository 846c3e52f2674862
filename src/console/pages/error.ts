import { STATUS_CODES } from 'node:http';
import type { ConsoleContext } from '../context.js';
import { prose } from '../format.js';
import { html } from '../html.js';
import { page } from '../layout.js';

/**
 * A refused request as a browser shows it: the error object's message on a console page, so a
 * mistyped filter or a missing payment leaves the operator in the console rather than on raw JSON.
 * `signedIn` false (a sign-in refused for its body) shows no navigation and no store, as the sign-in page.
 */
export function errorPage(context: ConsoleContext, status: number, error: { code: string; message: string }, signedIn: boolean): string {
  const body = html`
<div class="card"><p id="error" data-code="${error.code}">${prose(error.message)}</p>
<p><a class="button secondary" href="${context.prefix}/">Back to the overview</a></p></div>`;
  return page(context, { title: `${status} ${STATUS_CODES[status] ?? 'Error'}`, section: undefined, body, public: !signedIn });
}
