import { z } from 'zod';
import { readBidiEscapes } from '../../errors/index.js';
import { runKeys, RUN_STATUSES } from '../../runs/index.js';
import type { Run } from '../../store/index.js';
import type { ConsoleContext } from '../context.js';
import { ago, clip, id as idText, indentJson, prose, when } from '../format.js';
import { html } from '../html.js';
import { href, page } from '../layout.js';
import { maskEmails } from '../mask.js';
import { blankAsAbsent, PageSchema, pageWindow, pager, parseInput, RevealSchema } from '../query.js';
import { ConsoleRequestError } from '../request-error.js';

const STATUSES = RUN_STATUSES as [Run['status'], ...Array<Run['status']>];

const EventsQuery = z.strictObject({
  // Typed as the console shows them: `\u202e` stands for the bidirectional control (see FindTerm);
  // without the spaces around them, so an id pasted with a trailing space or line break is found.
  type: z
    .string()
    .max(200, 'type is too long')
    .transform((type) => readBidiEscapes(type).trim())
    .optional(),
  status: blankAsAbsent(z.enum(STATUSES, { error: `status must be one of ${STATUSES.join(', ')}` })),
  resource: z
    .string()
    .max(200, 'resource is too long')
    .transform((resource) => readBidiEscapes(resource).trim())
    .optional(),
  page: PageSchema,
});

/** The colour of a run status: failed red, done green, anything else (pending, running) amber. */
export const statusTone = (status: string | undefined) => (status === 'failed' ? 'error' : status === 'done' ? 'ok' : 'warn');

/** Stored events, newest first, filtered and paged on the store. */
export async function eventsPage(context: ConsoleContext, query: unknown): Promise<string> {
  const filter = parseInput(EventsQuery, query);
  const type = filter.type || undefined;
  const resource = filter.resource || undefined;
  const now = context.clock();
  const rows = await context.store.listEvents({ type, status: filter.status, resourceId: resource, ...pageWindow(context, filter.page) });
  const shown = rows.slice(0, context.pageSize);
  const body = html`
<form class="filters" method="get">
<div><label for="type">type</label><input id="type" name="type" value="${type ?? ''}" placeholder="payment.paid"></div>
<div><label for="status">dispatch</label><select id="status" name="status"><option value="">any</option>${STATUSES.map((status) => html`<option ${status === filter.status ? 'selected' : ''}>${status}</option>`)}</select></div>
<div><label for="resource">payment / invoice id</label><input id="resource" name="resource" value="${resource ?? ''}"></div>
<button type="submit">Filter</button></form>
<div class="scroll"><table id="events"><thead><tr><th>received</th><th>event</th><th>type</th><th>resource</th><th>dispatch</th><th class="num">attempts</th><th>error</th></tr></thead><tbody>
${shown.map(
  (event) => html`<tr data-id="${event.id}">
<td class="when">${ago(event.receivedAt, now)}</td>
<td><a href="${href(context, `/events/${encodeURIComponent(event.id)}`)}">${idText(event.id)}</a></td>
<td>${event.type}</td>
<td>${event.resourceId && event.resourceKind ? html`<a href="${href(context, `/${event.resourceKind}s/${encodeURIComponent(event.resourceId)}`)}">${idText(event.resourceId)}</a>` : event.resourceId ? idText(event.resourceId) : ''}</td>
<td class="${statusTone(event.run?.status)}">${event.run?.status ?? '—'}</td>
<td class="num">${event.run?.attempts ?? 0}</td>
<td>${clip(maskEmails(event.run?.lastError ?? ''), 120)}</td></tr>`,
)}
${shown.length === 0 ? html`<tr><td colspan="7" class="muted">no events${type || filter.status || resource ? ' match these filters' : ''}</td></tr>` : ''}
</tbody></table></div>
${pager(context, '/events', { type, status: filter.status, resource }, filter.page, rows.length > context.pageSize)}`;
  return page(context, { title: 'Events', section: 'events', body });
}

/** One event: its dispatch run and its raw body, escaped, e-mail addresses masked unless revealed. */
export async function eventPage(context: ConsoleContext, id: string, query: unknown): Promise<string> {
  const { reveal } = parseInput(z.strictObject({ reveal: RevealSchema }), query);
  const event = await context.store.getEvent(id);
  if (!event) throw new ConsoleRequestError(404, 'not_found', `No event ${id} in the store.`);
  const run = await context.store.getRun(runKeys.event(id));
  const revealed = reveal === '1';
  if (revealed) await logReveal(context, `event ${id}`);
  const body = html`
<div class="grid"><section class="card wide"><dl class="facts">
<dt>id</dt><dd>${idText(event.id)}</dd>
<dt>type</dt><dd id="event-type">${event.type}</dd>
<dt>environment</dt><dd>${event.environment ?? '—'}</dd>
<dt>created (by the service)</dt><dd>${when(event.createdAt)}</dd>
<dt>received</dt><dd>${when(event.receivedAt)}</dd>
<dt>resource</dt><dd>${event.resourceId && event.resourceKind ? html`<a href="${href(context, `/${event.resourceKind}s/${encodeURIComponent(event.resourceId)}`)}">${event.resourceKind} ${idText(event.resourceId)}</a>` : '—'}</dd>
<dt>dispatch</dt><dd class="${statusTone(run?.status)}">${run ? `${run.status}, ${run.attempts} attempt(s)` : '—'}</dd>
${run?.lastError ? html`<dt>last error</dt><dd class="error">${prose(maskEmails(run.lastError, revealed))}</dd>` : ''}
</dl>
<p>${run?.status === 'failed' ? html`<a class="button danger" href="${href(context, '/actions/retry', { key: runKeys.event(id) })}">Retry dispatch</a> ` : ''}<a class="button" id="replay" href="${href(context, '/actions/replay', { event: id })}">Replay to a URL…</a>
${revealed ? '' : html` <a class="button secondary" id="reveal" href="${href(context, `/events/${encodeURIComponent(id)}`, { reveal: '1' })}">Reveal e-mail addresses</a>`}</p></section>
<section class="card wide"><h2>Body ${event.body === undefined ? '' : html`<span class="muted">(${Buffer.byteLength(event.body)} bytes as received, indented here for reading, shown as text)</span>`}</h2>
${event.body === undefined ? html`<p class="muted">pruned by retention (only the id is kept, for dedupe)</p>` : html`<pre id="raw-body">${maskEmails(indentJson(event.body), revealed)}</pre>`}
</section></div>`;
  return page(context, { title: `Event ${id}`, section: 'events', body });
}

/** Revealing personal data is an action worth a log line. */
export async function logReveal(context: ConsoleContext, what: string): Promise<void> {
  context.logger.info({ action: 'reveal', target: what }, `console: e-mail addresses of ${what} revealed`);
  await context.store.appendActivity({ subject: 'console', kind: 'reveal', data: { target: what } }, context.clock()).catch(() => undefined);
}
