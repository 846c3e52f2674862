import { z } from 'zod';
import { ALERTS_SUBJECT } from '../../alerts/monitor.js';
import { RECONCILE_SUBJECT } from '../../reconcile/passes.js';
import type { ConsoleContext } from '../context.js';
import { prose, when } from '../format.js';
import { html } from '../html.js';
import { href, page } from '../layout.js';
import { maskEmails } from '../mask.js';
import { PageSchema, pageWindow, pager, parseInput } from '../query.js';

/** The toolkit's own timelines: what was done from the console, the alerts, the reconcile passes. */
const SUBJECTS = { console: 'Console actions', [ALERTS_SUBJECT]: 'Alerts', [RECONCILE_SUBJECT]: 'Reconcile passes' } as const;
type Subject = keyof typeof SUBJECTS;

const LogQuery = z.strictObject({
  subject: z.enum(Object.keys(SUBJECTS) as [Subject, ...Subject[]], { error: `subject must be one of ${Object.keys(SUBJECTS).join(', ')}` }).default('console'),
  page: PageSchema,
});

/** `target: payment:…:paid · ok: true`: one line that wraps between fields, never inside a value. */
const details = (data: Record<string, unknown>) =>
  Object.entries(data)
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' · ');

export async function logPage(context: ConsoleContext, query: unknown): Promise<string> {
  const filter = parseInput(LogQuery, query);
  const { offset, limit } = pageWindow(context, filter.page);
  const rows = await context.store.listActivity({ subject: filter.subject, offset, limit });
  const shown = rows.slice(0, context.pageSize);
  const body = html`
<p>${(Object.keys(SUBJECTS) as Subject[]).map((subject) => html`<a class="button ${subject === filter.subject ? '' : 'secondary'}" href="${href(context, '/log', { subject })}">${SUBJECTS[subject]}</a> `)}</p>
<div class="scroll"><table id="log"><thead><tr><th>when</th><th>what</th><th>details</th></tr></thead><tbody>
${shown.map((entry) => {
  const { message, title, ...rest } = entry.data;
  const headline = typeof message === 'string' ? message : typeof title === 'string' ? title : '';
  return html`<tr><td class="when">${when(entry.at)}</td><td>${entry.kind}</td><td>${prose(maskEmails(headline))}${Object.keys(rest).length > 0 ? html`<br><span class="muted">${prose(maskEmails(details(rest)))}</span>` : ''}</td></tr>`;
})}
${shown.length === 0 ? html`<tr><td colspan="3" class="muted">nothing recorded</td></tr>` : ''}
</tbody></table></div>
${pager(context, '/log', { subject: filter.subject }, filter.page, rows.length > context.pageSize)}`;
  return page(context, { title: 'Log', section: 'log', body });
}
