import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { badRequest } from './http-error.js';

/** What the content-type parsers keep: the raw text (signatures are over it) and whether it was JSON. */
export interface RawBody {
  text: string;
  json: boolean;
  contentType: string | undefined;
}

const RAW = Symbol('rawBody');

/**
 * Keep every body as raw text and parse it in the handler, so authentication (401/403) is checked
 * before the body (400), and a wrong content type is a 400 with the error object, not fastify's 415.
 */
export function installBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, { [RAW]: true, text: body as string, json: true }));
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) =>
    done(null, { [RAW]: true, text: body as string, json: false, contentType: request.headers['content-type'] }),
  );
}

export function rawBodyOf(request: FastifyRequest): RawBody {
  const body = request.body as (RawBody & { [RAW]?: true }) | undefined;
  if (body && body[RAW]) return { text: body.text, json: body.json, contentType: body.contentType };
  return { text: '', json: false, contentType: request.headers['content-type'] };
}

/** Summarise zod issues as one line: `amount: expected …; unknown field "x"`. */
function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      if (issue.code === 'unrecognized_keys') return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
      return `${issue.path.join('.') || 'body'}: ${issue.message}`;
    })
    .join('; ');
}

/**
 * Parse and validate a JSON body with `schema` (strict: unknown fields are refused). An empty body
 * counts as `{}` when `emptyIsObject`. Every failure is a 400 `invalid_request`.
 */
export function parseBody<S extends z.ZodType>(request: FastifyRequest, schema: S, options: { emptyIsObject?: boolean } = {}): z.output<S> {
  const raw = rawBodyOf(request);
  if (raw.text.trim() === '' && options.emptyIsObject) return parseValue({}, schema);
  if (!raw.json) throw badRequest(`Content-Type must be application/json (got ${raw.contentType ? JSON.stringify(raw.contentType) : 'none'}).`);
  if (raw.text.trim() === '') throw badRequest('The request body is empty: send a JSON object.');
  let value: unknown;
  try {
    value = JSON.parse(raw.text);
  } catch (error) {
    throw badRequest(`The request body is not valid JSON: ${(error as Error).message}.`);
  }
  return parseValue(value, schema);
}

function parseValue<S extends z.ZodType>(value: unknown, schema: S): z.output<S> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badRequest('The request body must be a JSON object.');
  if (Object.hasOwn(value, 'environment')) throw badRequest('Do not send "environment": it comes from the API key (spec section 1).');
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(`Invalid request body: ${describeIssues(result.error)}.`);
  return result.data;
}
