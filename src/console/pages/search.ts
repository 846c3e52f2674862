import { z } from 'zod';
import type { ConsoleContext } from '../context.js';
import { html } from '../html.js';
import { href, page } from '../layout.js';
import { parseInput } from '../query.js';
import { FindTerm, listingTable } from './resources.js';

const SearchQuery = z.strictObject({ q: FindTerm });

/** The most a search lists: it matches exactly, so more than a few means an e-mail's many orders. */
const SHOWN = 50;

/**
 * The overview's search: one box for an order id, a payment or invoice id, an e-mail (exact, in any
 * case, though lists show it masked) or an event id. One match opens it; several are listed.
 */
export async function search(context: ConsoleContext, query: unknown): Promise<{ redirect: string } | { html: string }> {
  const { q } = parseInput(SearchQuery, query);
  const rows = await context.store.searchResources({ find: q, limit: SHOWN + 1 });
  const [only] = rows;
  if (rows.length === 1 && only) return { redirect: href(context, `/${only.kind}s/${encodeURIComponent(only.id)}`) };
  const body = html`
<form class="filters" method="get" action="${href(context, '/search')}"><div><label for="q">order, id, e-mail or event</label><input id="q" name="q" type="search" value="${q}"></div><button type="submit">Search</button></form>
${listingTable(context, rows.slice(0, SHOWN), `nothing found for “${q}”: search finds an exact order id, payment or invoice id, e-mail or event id`)}
${rows.length > SHOWN ? html`<p class="muted">The first ${SHOWN} matches, newest first: narrow with the lists' filters.</p>` : ''}`;
  return { html: page(context, { title: `Search: ${q}`, section: undefined, body }) };
}
