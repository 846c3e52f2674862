import { z } from 'zod';
import { classify, type Classifiable, type Classification } from '../../fulfillment/outcome.js';
import type { HandlerState, NewsSource, Outcome, ResourceKind, ResourceListing, ResourceRecord, ResourceSearch } from '../../store/index.js';
import { HANDLER_OUTCOMES, MAX_ORDER_KEY_LENGTH } from '../../domain/index.js';
import { readBidiEscapes } from '../../errors/index.js';
import { DECIMAL } from '../../schemas/index.js';
import { readTimeline } from '../../timeline/index.js';
import type { ConsoleContext } from '../context.js';
import { ago, clip, id as idText, prose, when } from '../format.js';
import { html, type SafeHtml } from '../html.js';
import { href, page } from '../layout.js';
import { maskEmails } from '../mask.js';
import { blankAsAbsent, PageSchema, pageWindow, pager, parseInput, RevealSchema } from '../query.js';
import { ConsoleRequestError } from '../request-error.js';
import { logReveal, statusTone } from './events.js';

const SOURCES = Object.keys({ webhook: true, reconcile: true, return: true, checkout: true } satisfies Record<NewsSource, true>) as NewsSource[];

const OUTCOMES: readonly Outcome[] = ['pending', ...HANDLER_OUTCOMES];
const HANDLER_STATES = Object.keys({ failed: true, running: true, pending: true, done: true, none: true } satisfies Record<
  HandlerState,
  true
>) as HandlerState[];
/** What the handler column and filter call each state. */
const HANDLER_LABEL: Record<HandlerState, string> = { failed: 'failed for good', running: 'running', pending: 'waiting to run', done: 'done', none: 'none' };
const handlerTone = (state: HandlerState) => (state === 'failed' ? 'error' : state === 'done' ? 'ok' : state === 'none' ? 'muted' : 'info');

const choice = <T extends string>(name: string, values: readonly T[]) =>
  blankAsAbsent(z.enum(values as [T, ...T[]], { error: `${name} must be one of ${values.join(', ')}` }));
const DAY = blankAsAbsent(z.iso.date({ error: 'dates are YYYY-MM-DD' }));
/** Trimmed: an amount pasted with the spaces around it (` 10.00 `) is that amount. */
const AMOUNT = z.preprocess(
  (value) => (typeof value === 'string' ? value.trim() : value),
  blankAsAbsent(z.string().regex(DECIMAL, 'amounts are decimals such as 42.10')),
);

const FIND_WHAT = 'q is the order id, payment or invoice id, e-mail or event id to find';
/** What the search box and the lists' `q` take: matched exactly (as typed, or without the spaces around it), so a long one is a mistake. */
export const FindTerm = z
  .string({ error: FIND_WHAT })
  // Typed as the console shows it: `\u202e` stands for the bidirectional control, so an id copied from a page is found.
  .transform(readBidiEscapes)
  .refine((term) => term.trim() !== '', FIND_WHAT)
  // As long as a stored order key may be (a tenant's order: `<tenant>/<order>`), in characters as the
  // tenant id's pattern counts them, the spaces around it aside.
  .refine((term) => [...term.trim()].length <= MAX_ORDER_KEY_LENGTH, `q is at most ${MAX_ORDER_KEY_LENGTH} characters`);

/** The list's filters; `q` finds by id, order id, e-mail or event id, as the overview's search does. */
export const ResourcesQuery = z.strictObject({
  q: blankAsAbsent(FindTerm),
  outcome: choice('outcome', OUTCOMES),
  handler: choice('handler', HANDLER_STATES),
  open: choice('open', ['yes', 'no'] as const),
  learnedBy: choice('learnedBy', SOURCES),
  from: DAY,
  to: DAY,
  amountMin: AMOUNT,
  amountMax: AMOUNT,
  page: PageSchema,
});
type ResourcesFilters = z.infer<typeof ResourcesQuery>;

const outcomeTone = (outcome: string) => (outcome === 'paid' || outcome === 'overpaid' ? 'ok' : outcome === 'pending' ? 'info' : 'warn');

/** The store's search for a list's filters: days are whole UTC days, `to` included. */
export function searchOf(filter: ResourcesFilters): ResourceSearch {
  const nextDay = (day: string) => new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString();
  return {
    find: filter.q,
    outcome: filter.outcome,
    handler: filter.handler,
    open: filter.open === undefined ? undefined : filter.open === 'yes',
    outcomeSource: filter.learnedBy,
    since: filter.from === undefined ? undefined : `${filter.from}T00:00:00.000Z`,
    before: filter.to === undefined ? undefined : nextDay(filter.to),
    amountMin: filter.amountMin,
    amountMax: filter.amountMax,
  };
}

/** A table of payments and invoices as the lists and the search show them. */
export function listingTable(context: ConsoleContext, rows: ResourceListing[], empty: string): SafeHtml {
  const now = context.clock();
  return html`<div class="scroll"><table id="resources" class="listing"><thead><tr><th>id</th><th>order</th><th class="num">amount</th><th class="num">received</th><th>outcome</th><th>handler</th><th>learned by</th><th>open</th><th>last news</th></tr></thead><tbody>
${rows.map((record) => {
  const snapshot = record.snapshot ?? {};
  return html`<tr data-id="${record.id}" data-handler="${record.handler}">
<td><a href="${href(context, `/${record.kind}s/${encodeURIComponent(record.id)}`)}">${idText(record.id)}</a>${record.kind === 'invoice' ? html` <span class="muted">invoice</span>` : ''}</td>
<td>${record.orderId === undefined ? '' : idText(record.orderId)}</td>
<td class="num">${text(snapshot.amount) ?? ''} ${text(snapshot.token) ?? ''}</td>
<td class="num">${text(snapshot.amountReceived) ?? ''}</td>
<td class="${outcomeTone(record.outcome)}">${record.outcome}${record.late ? ' (late)' : ''}</td>
<td class="${handlerTone(record.handler)}" data-field="handler">${record.handler === 'failed' ? '✗ ' : ''}${HANDLER_LABEL[record.handler]}</td>
<td class="${record.outcomeSource === 'reconcile' ? 'warn' : ''}">${record.outcomeSource ?? ''}</td>
<td>${record.open ? 'open' : 'closed'}</td>
<td class="when">${ago(record.lastNewsAt, now)}</td></tr>`;
})}
${rows.length === 0 ? html`<tr><td colspan="9" class="muted">${empty}</td></tr>` : ''}
</tbody></table></div>`;
}

const select = <T extends string>(name: string, label: string, values: readonly T[], chosen: T | undefined, labelOf: (value: T) => string = (value) => value) =>
  html`<div><label for="${name}">${label}</label><select id="${name}" name="${name}"><option value="">any</option>${values.map((value) => html`<option value="${value}" ${value === chosen ? 'selected' : ''}>${labelOf(value)}</option>`)}</select></div>`;
const input = (name: string, label: string, type: string, value: string | undefined, extra = '') =>
  html`<div><label for="${name}">${label}</label><input id="${name}" name="${name}" type="${type}" value="${value ?? ''}" ${extra}></div>`;

/** Payments or invoices, newest first, found and filtered on the store's indexes, paged. */
export async function resourcesPage(context: ConsoleContext, kind: ResourceKind, query: unknown): Promise<string> {
  const filter = parseInput(ResourcesQuery, query);
  const rows = await context.store.searchResources({ kind, ...searchOf(filter), ...pageWindow(context, filter.page) });
  const plural = `${kind}s`;
  const { page: pageNumber, ...kept } = filter;
  const filtered = Object.values(kept).some((value) => value !== undefined);
  const body = html`
<form class="filters" method="get">
${input('q', 'order, id, e-mail or event', 'search', filter.q, 'placeholder="A-1001, pay_…, buyer@…"')}
${select('outcome', 'outcome', OUTCOMES, filter.outcome)}
${select('handler', 'handler', HANDLER_STATES, filter.handler, (state) => HANDLER_LABEL[state])}
${select('open', 'open', ['yes', 'no'] as const, filter.open)}
${select('learnedBy', 'outcome learned by', SOURCES, filter.learnedBy)}
${input('from', 'first seen from', 'date', filter.from)}
${input('to', 'to', 'date', filter.to)}
${input('amountMin', 'amount from', 'text', filter.amountMin, 'inputmode="decimal" size="8"')}
${input('amountMax', 'to', 'text', filter.amountMax, 'inputmode="decimal" size="8"')}
<button type="submit">Filter</button></form>
${listingTable(context, rows.slice(0, context.pageSize), `no ${plural}${filtered ? ' match these filters' : ''}`)}
${pager(context, `/${plural}`, kept, pageNumber, rows.length > context.pageSize)}`;
  return page(context, { title: kind === 'payment' ? 'Payments' : 'Invoices', section: plural as 'payments' | 'invoices', body });
}

function classification(context: ConsoleContext, record: ResourceRecord): Classification | undefined {
  if (!record.snapshot) return undefined;
  try {
    const result = classify(record.snapshot as unknown as Classifiable, { ...context.outcomeRules, now: context.clock() });
    // Lateness is fixed when the resource was first paid (see ResourceRecord.late).
    return { ...result, late: record.late ?? result.late };
  } catch {
    return undefined;
  }
}

const text = (value: unknown) => (typeof value === 'string' ? value : value === undefined || value === null ? undefined : JSON.stringify(value));

/** One payment or invoice: its current classification and its whole timeline. */
export async function resourcePage(context: ConsoleContext, kind: ResourceKind, id: string, query: unknown): Promise<string> {
  const { reveal } = parseInput(z.strictObject({ reveal: RevealSchema }), query);
  const record = await context.store.getResource(kind, id);
  if (!record) throw new ConsoleRequestError(404, 'not_found', `No ${kind} ${id} in the store.`);
  const revealed = reveal === '1';
  if (revealed) await logReveal(context, `${kind} ${id}`);
  const now = context.clock();
  const verdict = classification(context, record);
  // The service's own decimal strings where it gave them; shortfall and surplus are computed.
  const snapshot = record.snapshot ?? {};
  const email = text(snapshot.email);
  const timeline = await readTimeline(context.store, kind, id);
  const failedRuns = timeline.runs.filter((run) => run.status === 'failed');
  const plural = `${kind}s`;
  const body = html`
<div class="grid">
<section class="card double"><h2>Classification</h2><dl class="facts" id="classification">
<dt>outcome</dt><dd class="${outcomeTone(record.outcome)}" data-field="outcome">${record.outcome}${record.outcomeSource ? ` (learned by ${record.outcomeSource})` : ''}</dd>
<dt>amount</dt><dd data-field="amount">${text(snapshot.amount) ?? verdict?.amount ?? '—'}${snapshot.token === undefined ? '' : ` ${text(snapshot.token)}`}</dd>
<dt>received</dt><dd data-field="received">${text(snapshot.amountReceived) ?? verdict?.amountReceived ?? '—'}</dd>
${verdict && verdict.shortfall !== '0' ? html`<dt>shortfall</dt><dd class="warn" data-field="shortfall">${verdict.shortfall}</dd>` : ''}
${verdict && verdict.surplus !== '0' ? html`<dt>surplus</dt><dd class="warn" data-field="surplus">${verdict.surplus}</dd>` : ''}
<dt>late</dt><dd data-field="late">${verdict?.late ? 'yes (paid after expiry)' : 'no'}</dd>
<dt>now classified</dt><dd>${verdict?.outcome ?? '—'}</dd>
</dl></section>
<section class="card double"><h2>${kind === 'payment' ? 'Payment' : 'Invoice'}</h2><dl class="facts">
<dt>id</dt><dd>${idText(record.id)}</dd>
<dt>order</dt><dd>${record.orderId === undefined ? '—' : idText(record.orderId)}</dd>
<dt>status (service)</dt><dd>${text(snapshot.status) ?? '—'}</dd>
<dt>e-mail</dt><dd data-field="email">${email === undefined ? '—' : maskEmails(email, revealed)} ${email !== undefined && !revealed ? html`<a id="reveal" href="${href(context, `/${plural}/${encodeURIComponent(id)}`, { reveal: '1' })}">reveal</a>` : ''}</dd>
<dt>expires</dt><dd>${when(record.expiresAt || undefined)}</dd>
<dt>environment</dt><dd>${record.environment ?? '—'}</dd>
<dt>state</dt><dd>${record.open ? 'open (still polled by reconcile)' : 'closed'}</dd>
<dt>last news</dt><dd>${ago(record.lastNewsAt, now)}</dd>
</dl></section>
<section class="card wide"><h2>Timeline</h2>
<div class="scroll"><table class="timeline" id="timeline"><thead><tr><th>when</th><th>what</th><th>details</th></tr></thead><tbody>
${timeline.entries.map(
  (entry) =>
    html`<tr data-kind="${entry.kind}"><td class="when">${when(entry.at)}</td><td class="${entry.tone}">${entry.eventId ? html`<a href="${href(context, `/events/${encodeURIComponent(entry.eventId)}`)}">${entry.title}</a>` : entry.title}</td><td>${entry.detail === undefined ? '' : prose(maskEmails(entry.detail, revealed))}</td></tr>`,
)}
${timeline.entries.length === 0 ? html`<tr><td colspan="3" class="muted">nothing recorded yet</td></tr>` : ''}
</tbody></table></div></section>
<section class="card wide"><h2>Handler runs</h2>
<div class="scroll"><table id="runs"><thead><tr><th>run</th><th>status</th><th class="num">attempts</th><th>error</th><th></th></tr></thead><tbody>
${timeline.runs.map(
  (
    run,
  ) => html`<tr data-key="${run.key}"><td>${idText(run.key)}</td><td class="${statusTone(run.status)}" data-field="run-status">${run.status}</td><td class="num">${run.attempts}</td><td>${clip(maskEmails(run.lastError ?? '', revealed), 160)}</td>
<td>${run.status === 'failed' ? html`<a class="button danger" href="${href(context, '/actions/retry', { key: run.key })}">Retry</a>` : ''}</td></tr>`,
)}
${timeline.runs.length === 0 ? html`<tr><td colspan="5" class="muted">no handler run (the outcome is still pending)</td></tr>` : ''}
</tbody></table></div>
${failedRuns.length > 0 ? html`<p class="error">${failedRuns.length} run(s) failed for good: fix the cause, then retry.</p>` : ''}</section>
</div>`;
  return page(context, { title: `${kind === 'payment' ? 'Payment' : 'Invoice'} ${id}`, section: plural as 'payments' | 'invoices', body });
}
