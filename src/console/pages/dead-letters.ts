import { z } from 'zod';
import type { ConsoleContext } from '../context.js';
import { clip, indentJson, prose, when } from '../format.js';
import { html } from '../html.js';
import { page } from '../layout.js';
import { maskEmails } from '../mask.js';
import { PageSchema, pageWindow, pager, parseInput } from '../query.js';

/** A longer reason is cut in the row and shown whole beside the body. */
const REASON_SHOWN = 120;

/** Deliveries that verified but could not be parsed, newest first, bodies as escaped text. */
export async function deadLettersPage(context: ConsoleContext, query: unknown): Promise<string> {
  const filter = parseInput(z.strictObject({ page: PageSchema }), query);
  const { offset, limit } = pageWindow(context, filter.page);
  const rows = await context.store.listDeadLetters(limit, offset);
  const shown = rows.slice(0, context.pageSize);
  const body = html`
<p class="muted">Deliveries the receiver kept for inspection instead of dispatching them (a body it could not read as an event). Nothing was dispatched for them.</p>
<div class="scroll"><table id="dead-letters"><thead><tr><th>received</th><th>reason</th><th>body</th></tr></thead><tbody>
${shown.map((letter) => html`<tr data-id="${letter.id}"><td class="when">${when(letter.receivedAt)}</td><td>${clip(maskEmails(letter.reason), REASON_SHOWN)}</td><td><details><summary>${Buffer.byteLength(letter.body)} bytes</summary>${letter.reason.length > REASON_SHOWN ? html`<p>${prose(maskEmails(letter.reason))}</p>` : ''}<pre>${maskEmails(indentJson(letter.body))}</pre></details></td></tr>`)}
${shown.length === 0 ? html`<tr><td colspan="3" class="muted">no dead letters</td></tr>` : ''}
</tbody></table></div>
${pager(context, '/dead-letters', {}, filter.page, rows.length > context.pageSize)}`;
  return page(context, { title: 'Dead letters', section: 'dead-letters', body });
}
