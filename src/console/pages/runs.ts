import { z } from 'zod';
import { parseRunKey, RUN_STATUSES } from '../../runs/index.js';
import type { Run } from '../../store/index.js';
import type { ConsoleContext } from '../context.js';
import { age, clip, id as idText } from '../format.js';
import { html } from '../html.js';
import { href, page } from '../layout.js';
import { maskEmails } from '../mask.js';
import { blankAsAbsent, PageSchema, pageWindow, pager, parseInput } from '../query.js';
import { statusTone } from './events.js';

const STATUSES = RUN_STATUSES;
const KINDS = Object.keys({ fulfillment: true, event: true } satisfies Record<Run['kind'], true>) as Array<Run['kind']>;

const RunsQuery = z.strictObject({
  status: blankAsAbsent(z.enum(STATUSES as [Run['status'], ...Array<Run['status']>], { error: `status must be one of ${STATUSES.join(', ')}` })),
  kind: blankAsAbsent(z.enum(KINDS as [Run['kind'], ...Array<Run['kind']>], { error: `kind must be one of ${KINDS.join(', ')}` })),
  page: PageSchema,
});

/** Where a run's subject is shown: the payment or invoice of a handler run, the event of a dispatch run. */
function subjectLink(context: ConsoleContext, run: Run) {
  const subject = parseRunKey(run.key);
  if (subject?.kind === 'event') return href(context, `/events/${encodeURIComponent(subject.eventId)}`);
  if (subject?.kind === 'fulfillment') return href(context, `/${subject.resourceKind}s/${encodeURIComponent(subject.resourceId)}`);
  return undefined;
}

/** Handler and dispatch runs, newest first, with a retry button on each failed one. */
export async function runsPage(context: ConsoleContext, query: unknown): Promise<string> {
  const filter = parseInput(RunsQuery, query);
  const now = context.clock();
  const rows = await context.store.listRuns({ status: filter.status, kind: filter.kind, newestFirst: true, ...pageWindow(context, filter.page) });
  const shown = rows.slice(0, context.pageSize);
  const body = html`
<form class="filters" method="get">
<div><label for="status">status</label><select id="status" name="status"><option value="">any</option>${STATUSES.map((status) => html`<option ${status === filter.status ? 'selected' : ''}>${status}</option>`)}</select></div>
<div><label for="kind">kind</label><select id="kind" name="kind"><option value="">any</option>${KINDS.map((kind) => html`<option ${kind === filter.kind ? 'selected' : ''}>${kind}</option>`)}</select></div>
<button type="submit">Filter</button>
${filter.status === 'failed' && shown.length > 0 ? html`<a class="button danger" id="retry-all" href="${href(context, '/actions/retry-all')}">Retry all failed</a>` : ''}</form>
<div class="scroll"><table id="runs"><thead><tr><th>run</th><th>kind</th><th>status</th><th class="num">attempts</th><th>next attempt</th><th>error</th><th></th></tr></thead><tbody>
${shown.map((run) => {
  const link = subjectLink(context, run);
  return html`<tr data-key="${run.key}">
<td>${link ? html`<a href="${link}">${idText(run.key)}</a>` : idText(run.key)}</td><td>${run.kind}</td>
<td class="${statusTone(run.status)}" data-field="status">${run.status}</td>
<td class="num">${run.attempts}</td>
<td class="when">${run.status === 'pending' ? `in ${age(now.toISOString(), new Date(Date.parse(run.nextAttemptAt)))}` : ''}</td>
<td>${clip(maskEmails(run.lastError ?? ''), 160)}</td>
<td>${run.status === 'failed' ? html`<a class="button danger retry" href="${href(context, '/actions/retry', { key: run.key })}">Retry</a>` : ''}</td></tr>`;
})}
${shown.length === 0 ? html`<tr><td colspan="7" class="muted">no runs${filter.status || filter.kind ? ' match these filters' : ''}</td></tr>` : ''}
</tbody></table></div>
${pager(context, '/runs', { status: filter.status, kind: filter.kind }, filter.page, rows.length > context.pageSize)}`;
  return page(context, { title: 'Runs', section: 'runs', body });
}
