import { ALERTS_SUBJECT } from '../../alerts/monitor.js';
import { verificationFailuresSince } from '../../metrics/verification-log.js';
import { recentPasses } from '../../reconcile/passes.js';
import type { ConsoleContext } from '../context.js';
import { age, count, prose, when } from '../format.js';
import { html, type SafeHtml } from '../html.js';
import { href, page } from '../layout.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;

/** A figure the browser tests read back (`data-count`). */
const figure = (name: string, value: number, tone = '') => html`<span class="big ${tone}" data-count="${name}">${count(value)}</span>`;

/** Incidents whose newest record is `firing`. */
async function openIncidents(context: ConsoleContext): Promise<Array<{ at: string; title: string; next: string }>> {
  const seen = new Set<string>();
  const open: Array<{ at: string; title: string; next: string }> = [];
  for (const entry of await context.store.listActivity({ subject: ALERTS_SUBJECT, limit: 200 })) {
    const alert = String(entry.data.alert);
    if (seen.has(alert)) continue;
    seen.add(alert);
    if (entry.data.state === 'firing') open.push({ at: entry.at, title: String(entry.data.title ?? alert), next: String(entry.data.next ?? '') });
  }
  return open;
}

/** The overview: what arrived, what is stuck or failed, what reconcile had to catch, the last pass. */
export async function overviewPage(context: ConsoleContext): Promise<string> {
  const now = context.clock();
  const summary = await context.store.summarize({ now });
  const hourAgo = new Date(now.getTime() - HOUR).toISOString();
  const dayAgo = new Date(now.getTime() - DAY).toISOString();
  const verifiedHour = await verificationFailuresSince(context.store, hourAgo);
  const verifiedDay = await verificationFailuresSince(context.store, dayAgo);
  const { last } = await recentPasses(context.store);
  const incidents = await openIncidents(context);
  const totalHour = summary.eventsByType.reduce((sum, row) => sum + row.lastHour, 0);
  const totalDay = summary.eventsByType.reduce((sum, row) => sum + row.lastDay, 0);
  const failed = summary.fulfillment.failed + summary.dispatch.failed;
  const reasons = [...new Set([...Object.keys(verifiedDay.byReason), ...Object.keys(verifiedHour.byReason)])].sort();
  const missed = summary.learnedByReconcile.payment + summary.learnedByReconcile.invoice;

  const lastPass: SafeHtml = last
    ? html`<dl class="facts" id="last-pass">
<dt>finished</dt><dd>${when(last.at)} (${age(last.at, now)} ago)</dd>
<dt>result</dt><dd class="${last.ok && last.failed === 0 ? 'ok' : 'error'}" data-field="pass-result">${last.ok ? (last.failed === 0 ? 'ok' : `${last.failed} failure(s)`) : prose(`stopped: ${last.error ?? 'error'}`)}</dd>
<dt>checked</dt><dd data-field="pass-checked">${count(last.checked)}</dd>
<dt>fulfilled</dt><dd>${count(last.fulfilled)}</dd>
<dt>missed by webhooks</dt><dd class="${last.missedByWebhooks > 0 ? 'warn' : ''}" data-field="pass-missed">${count(last.missedByWebhooks)}</dd>
<dt>took</dt><dd>${count(last.durationMs)} ms</dd></dl>`
    : html`<p class="muted" id="last-pass">No reconcile pass recorded yet: schedule <code>checkout-kit reconcile</code> from cron.</p>`;

  const body = html`
<form class="search" id="search" method="get" action="${href(context, '/search')}"><label for="q">Find an order</label><input id="q" name="q" type="search" placeholder="order id, payment or invoice id, e-mail or event id" required><button type="submit">Search</button></form>
${incidents.length > 0 ? html`<div class="notice error" id="incidents"><strong>Open alerts</strong><ul>${incidents.map((incident) => html`<li>${prose(incident.title)} <span class="muted">(since ${when(incident.at)})</span><br><span class="muted">Next: ${prose(incident.next)}</span></li>`)}</ul></div>` : ''}
<div class="grid">
<section class="card double"><h2>Events received</h2>
<div>${figure('events-last-hour', totalHour)} <span class="muted">last hour</span> · ${figure('events-last-day', totalDay)} <span class="muted">last 24 h</span></div>
<div class="scroll"><table id="events-by-type"><thead><tr><th>type</th><th class="num">hour</th><th class="num">24 h</th></tr></thead><tbody>
${summary.eventsByType.map((row) => html`<tr data-type="${row.type}"><td><a href="${href(context, '/events', { type: row.type })}">${row.type}</a></td><td class="num">${count(row.lastHour)}</td><td class="num">${count(row.lastDay)}</td></tr>`)}
${summary.eventsByType.length === 0 ? html`<tr><td colspan="3" class="muted">none in the last 24 hours</td></tr>` : ''}
</tbody></table></div></section>

<section class="card"><h2>Verification failures</h2>
<div>${figure('verification-last-hour', verifiedHour.total, verifiedHour.total > 0 ? 'warn' : '')} <span class="muted">last hour</span> · ${figure('verification-last-day', verifiedDay.total)} <span class="muted">last 24 h</span></div>
<div class="scroll"><table id="verification-by-reason"><thead><tr><th>reason</th><th class="num">hour</th><th class="num">24 h</th></tr></thead><tbody>
${reasons.map((reason) => html`<tr data-reason="${reason}"><td>${reason}</td><td class="num">${count(verifiedHour.byReason[reason] ?? 0)}</td><td class="num">${count(verifiedDay.byReason[reason] ?? 0)}</td></tr>`)}
${reasons.length === 0 ? html`<tr><td colspan="3" class="muted">none</td></tr>` : ''}
</tbody></table></div>
<p class="muted">bad_signature after a secret rotation: add the new secret to CHECKOUT_WEBHOOK_SECRET.</p></section>

<section class="card"><h2>Dispatch backlog</h2>
<div>${figure('backlog', summary.dispatch.pending + summary.dispatch.running)} <span class="muted">events waiting</span></div>
<p>oldest waiting: <strong data-field="backlog-age">${summary.dispatch.oldestQueuedAt ? age(summary.dispatch.oldestQueuedAt, now) : 'none'}</strong></p>
<p><a href="${href(context, '/events', { status: 'pending' })}">pending events</a> · dispatch failed for good: <a href="${href(context, '/runs', { status: 'failed', kind: 'event' })}" data-count="dispatch-failed">${count(summary.dispatch.failed)}</a></p></section>

<section class="card"><h2>Handler runs</h2>
<div class="scroll"><table><tbody>
<tr><td>pending</td><td class="num" data-count="runs-pending">${count(summary.fulfillment.pending)}</td></tr>
<tr><td>running</td><td class="num" data-count="runs-running">${count(summary.fulfillment.running)}</td></tr>
<tr><td><a href="${href(context, '/runs', { status: 'failed' })}">failed for good</a></td><td class="num ${summary.fulfillment.failed > 0 ? 'error' : ''}" data-count="runs-failed">${count(summary.fulfillment.failed)}</td></tr>
</tbody></table></div>
${failed > 0 ? html`<p><a class="button danger" id="retry-all" href="${href(context, '/actions/retry-all')}">Retry all failed (${count(failed)})</a></p>` : ''}</section>

<section class="card"><h2>Open</h2>
<div>${figure('open-payments', summary.open.payment)} <a href="${href(context, '/payments', { open: 'yes' })}">payments</a> · ${figure('open-invoices', summary.open.invoice)} <a href="${href(context, '/invoices', { open: 'yes' })}">invoices</a></div>
<p class="muted">awaiting an outcome, or late money until 7 days after expiry</p></section>

<section class="card"><h2>Caught only by reconcile</h2>
<div>${figure('learned-by-reconcile', missed, missed > 0 ? 'warn' : '')} <span class="muted">payments and invoices</span></div>
<p><a href="${href(context, '/payments', { learnedBy: 'reconcile' })}">payments</a> (${count(summary.learnedByReconcile.payment)}) · <a href="${href(context, '/invoices', { learnedBy: 'reconcile' })}">invoices</a> (${count(summary.learnedByReconcile.invoice)})</p>
<p class="muted">Their outcome came from polling, not from a webhook: many here means the webhook endpoint is not reached.</p></section>

<section class="card"><h2>Last reconcile pass</h2>
${lastPass}
<p>${context.reconcile ? html`<a class="button" id="reconcile-now" href="${href(context, '/actions/reconcile')}">Reconcile now</a>` : html`<span class="muted">Reconcile now: ${context.reconcileUnavailable}</span>`}</p></section>

<section class="card"><h2>Dead letters</h2>
<div>${figure('dead-letters', summary.deadLetters)} <a href="${href(context, '/dead-letters')}">deliveries kept for inspection</a></div></section>
</div>`;
  return page(context, { title: 'Overview', section: 'overview', body });
}
