import { z } from 'zod';
import type { ConsoleContext } from '../context.js';
import { id, when } from '../format.js';
import { html } from '../html.js';
import { page } from '../layout.js';
import { maskEmail } from '../mask.js';
import { PageSchema, pageWindow, pager, parseInput } from '../query.js';

/** A partner platform's tenants and their merchants at the service, oldest first. */
export async function merchantsPage(context: ConsoleContext, query: unknown): Promise<string> {
  const filter = parseInput(z.strictObject({ page: PageSchema }), query);
  const { offset, limit } = pageWindow(context, filter.page);
  const rows = await context.store.listTenantMerchants({ limit, offset });
  const shown = rows.slice(0, context.pageSize);
  const body = html`
<p class="muted">The tenants this platform onboarded (<code>checkout-kit merchants onboard</code>): one merchant at the service per tenant and environment. A tenant still <em>sending</em> is completed by onboarding it again; a <em>refused</em> one was not created.</p>
<div class="scroll"><table id="merchants"><thead><tr><th>tenant</th><th>environment</th><th>merchant</th><th>status</th><th>name</th><th>e-mail</th><th>onboarded</th></tr></thead><tbody>
${shown.map((t) => html`<tr data-tenant="${t.tenantId}"><td>${id(t.tenantId)}</td><td>${t.environment}</td><td>${t.merchantId ? id(t.merchantId) : '-'}</td><td>${t.status}</td><td>${t.name}</td><td>${maskEmail(t.email)}</td><td class="when">${when(t.createdAt)}</td></tr>`)}
${shown.length === 0 ? html`<tr><td colspan="7" class="muted">no tenants onboarded</td></tr>` : ''}
</tbody></table></div>
${pager(context, '/merchants', {}, filter.page, rows.length > context.pageSize)}`;
  return page(context, { title: 'Merchants', section: 'merchants', body });
}
