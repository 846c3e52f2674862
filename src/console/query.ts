import { z } from 'zod';
import type { ConsoleContext } from './context.js';
import { html, type SafeHtml } from './html.js';
import { href } from './layout.js';
import { ConsoleRequestError } from './request-error.js';

/** `?page=`: a whole number from 1. */
export const PageSchema = z.coerce
  .number({ error: 'page must be a whole number from 1' })
  .int('page must be a whole number from 1')
  .min(1, 'page must be a whole number from 1')
  .max(1_000_000, 'page must be at most 1000000')
  .default(1);

/** `?reveal=1`: show e-mail addresses unmasked (logged). */
export const RevealSchema = z.enum(['1'], { error: 'reveal must be 1' }).optional();

/**
 * Parse a query string or form with a strict schema: an unknown parameter or a bad value is a 400
 * whose message names it, never silently ignored.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what = 'parameter'): z.infer<S> {
  const parsed = schema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue?.path.join('.');
  const message =
    issue?.code === 'unrecognized_keys'
      ? `unknown ${what}${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`
      : `${path && !issue?.message.startsWith(path) ? `${path}: ` : ''}${issue?.message ?? 'invalid input'}`;
  throw new ConsoleRequestError(400, 'invalid_request', `${message}.`);
}

/** The store query of a page: one row more than shown, to know whether there is a next page. */
export function pageWindow(context: ConsoleContext, page: number): { offset: number; limit: number } {
  return { offset: (page - 1) * context.pageSize, limit: context.pageSize + 1 };
}

/** Previous / next links that keep the filters. */
export function pager(context: ConsoleContext, path: string, query: Record<string, string | number | undefined>, page: number, hasNext: boolean): SafeHtml {
  return html`<div class="pager">
${page > 1 ? html`<a class="button secondary" id="prev" href="${href(context, path, { ...query, page: page - 1 })}">← Newer</a>` : ''}
<span class="muted">page ${page}</span>
${hasNext ? html`<a class="button secondary" id="next" href="${href(context, path, { ...query, page: page + 1 })}">Older →</a>` : ''}
</div>`;
}

/** An empty form field (`?status=`) means "not given". */
export const blankAsAbsent = <S extends z.ZodType>(schema: S) => z.preprocess((value) => (value === '' ? undefined : value), schema.optional());
