import { parse as parseQuery } from 'node:querystring';
import type { FastifyInstance } from 'fastify';
import { utf8Text } from '../webhooks/verify/utf8.js';

/** A body that is not UTF-8, as fastify's parsers report a client's mistake (a 400). */
const notUtf8 = () => Object.assign(new Error('The request body is not valid UTF-8'), { statusCode: 400 });

/**
 * Make `scope` accept JSON (and, with `form`, HTML forms) decoded strictly, and no other body (a
 * 415). A lenient decoder turns every invalid UTF-8 sequence into U+FFFD, so two different byte
 * strings could name the same order or tenant. Call it in a route's own context: it replaces, in
 * that scope only, any parser the application set.
 */
export function acceptStrictBodies(scope: FastifyInstance, { form = false }: { form?: boolean } = {}): void {
  scope.removeAllContentTypeParsers();
  const parseJson = scope.getDefaultJsonParser(scope.initialConfig.onProtoPoisoning ?? 'error', scope.initialConfig.onConstructorPoisoning ?? 'error');
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const text = utf8Text(body as Buffer);
    if (text === undefined) return done(notUtf8(), undefined);
    return parseJson(request, text, done);
  });
  if (!form) return;
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (_request, body, done) => {
    const text = utf8Text(body as Buffer);
    const fields = text === undefined ? undefined : parseQuery(text);
    // A %-escape that is not UTF-8 decodes to U+FFFD too: refuse that as well.
    if (fields === undefined || (!text!.includes('\uFFFD') && JSON.stringify(fields).includes('\uFFFD'))) return done(notUtf8(), undefined);
    return done(null, fields);
  });
}
