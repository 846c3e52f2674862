import { z } from 'zod';
import { classify, type Classifiable, type Classification } from '../../fulfillment/outcome.js';
import type { NewsSource, ResourceKind, ResourceRecord } from '../../store/index.js';
import { readTimeline } from '../../timeline/index.js';
import type { ConsoleContext } from '../context.js';
import { ago, clip, id as idText, prose, when } from '../format.js';
import { html } from '../html.js';
import { href, page } from '../layout.js';
import { maskEmails } from '../mask.js';
import { blankAsAbsent, PageSchema, pageWindow, pager, parseInput, RevealSchema } from '../query.js';
import { ConsoleRequestError } from '../request-error.js';
import { logReveal, statusTone } from './events.js';

const SOURCES = Object.keys({ webhook: true, reconcile: true, return: true, checkout: true } satisfies Record<NewsSource, true>) as NewsSource[];

const ResourcesQuery = z.strictObject({
  open: blankAsAbsent(z.enum(['yes', 'no'], { error: 'open must be yes or no' })),
  learnedBy: blankAsAbsent(z.enum(SOURCES as [NewsSource, ...NewsSource[]], { error: `learnedBy must be one of ${SOURCES.join(', ')}` })),
  page: PageSchema,
});

const outcomeTone = (outcome: string) => (outcome === 'paid' || outcome === 'overpaid' ? 'ok' : outcome === 'pending' ? 'info' : 'warn');

/** Payments or invoices, newest first, filtered and paged on the store. */
export async function resourcesPage(context: ConsoleContext, kind: ResourceKind, query: unknown): Promise<string> {
  const filter = parseInput(ResourcesQuery, query);
  const now = context.clock();
  const open = filter.open === undefined ? undefined : filter.open === 'yes';
  const rows = await context.store.listResources({ kind, open, outcomeSource: filter.learnedBy, newestFirst: true, ...pageWindow(context, filter.page) });
  const shown = rows.slice(0, context.pageSize);
  const plural = `${kind}s`;
  const body = html`
<form class="filters" method="get">
<div><label for="open">open</label><select id="open" name="open"><option value="">any</option>${(['yes', 'no'] as const).map((value) => html`<option ${value === filter.open ? 'selected' : ''}>${value}</option>`)}</select></div>
<div><label for="learnedBy">outcome learned by</label><select id="learnedBy" name="learnedBy"><option value="">any</option>${SOURCES.map((source) => html`<option ${source === filter.learnedBy ? 'selected' : ''}>${source}</option>`)}</select></div>
<button type="submit">Filter</button></form>
<div class="scroll"><table id="${plural}"><thead><tr><th>${kind}</th><th>order</th><th>outcome</th><th>learned by</th><th>late</th><th>open</th><th>last news</th></tr></thead><tbody>
${shown.map(
  (record) => html`<tr data-id="${record.id}">
<td><a href="${href(context, `/${plural}/${encodeURIComponent(record.id)}`)}">${idText(record.id)}</a></td>
<td>${record.orderId === undefined ? '' : idText(record.orderId)}</td>
<td class="${outcomeTone(record.outcome)}">${record.outcome}</td>
<td class="${record.outcomeSource === 'reconcile' ? 'warn' : ''}">${record.outcomeSource ?? ''}</td>
<td>${record.late ? 'late' : ''}</td>
<td>${record.open ? 'open' : 'closed'}</td>
<td class="when">${ago(record.lastNewsAt, now)}</td></tr>`,
)}
${shown.length === 0 ? html`<tr><td colspan="7" class="muted">no ${plural}${filter.open || filter.learnedBy ? ' match these filters' : ''}</td></tr>` : ''}
</tbody></table></div>
${pager(context, `/${plural}`, { open: filter.open, learnedBy: filter.learnedBy }, filter.page, rows.length > context.pageSize)}`;
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

/** One payment or invoice: its current classification and its whole timeline (issue 15). */
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
<dt>amount</dt><dd data-field="amount">${text(snapshot.amount) ?? verdict?.amount ?? '—'}</dd>
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
  (entry) => html`<tr data-kind="${entry.kind}"><td class="when">${when(entry.at)}</td><td class="${entry.tone}">${entry.eventId ? html`<a href="${href(context, `/events/${encodeURIComponent(entry.eventId)}`)}">${entry.title}</a>` : entry.title}</td><td>${entry.detail === undefined ? '' : prose(maskEmails(entry.detail, revealed))}</td></tr>`,
)}
${timeline.entries.length === 0 ? html`<tr><td colspan="3" class="muted">nothing recorded yet</td></tr>` : ''}
</tbody></table></div></section>
<section class="card wide"><h2>Handler runs</h2>
<div class="scroll"><table id="runs"><thead><tr><th>run</th><th>status</th><th class="num">attempts</th><th>error</th><th></th></tr></thead><tbody>
${timeline.runs.map(
  (run) => html`<tr data-key="${run.key}"><td>${idText(run.key)}</td><td class="${statusTone(run.status)}" data-field="run-status">${run.status}</td><td class="num">${run.attempts}</td><td>${clip(maskEmails(run.lastError ?? '', revealed), 160)}</td>
<td>${run.status === 'failed' ? html`<a class="button danger" href="${href(context, '/actions/retry', { key: run.key })}">Retry</a>` : ''}</td></tr>`,
)}
${timeline.runs.length === 0 ? html`<tr><td colspan="5" class="muted">no handler run (the outcome is still pending)</td></tr>` : ''}
</tbody></table></div>
${failedRuns.length > 0 ? html`<p class="error">${failedRuns.length} run(s) failed for good: fix the cause, then retry.</p>` : ''}</section>
</div>`;
  return page(context, { title: `${kind === 'payment' ? 'Payment' : 'Invoice'} ${id}`, section: plural as 'payments' | 'invoices', body });
}
