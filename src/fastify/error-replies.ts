import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest, FastifyServerOptions, HTTPMethods } from 'fastify';
import { CHECKOUT_ERROR_STATUS, InvalidResponseError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { errorObject, type ErrorObject } from '../schemas/error.js';

/**
 * The spec's error code for each status a client's mistake is answered with (fastify's own
 * errors: bad JSON, media type, body size, URL; Node's: unreadable HTTP, headers too large).
 */
const CODE_BY_STATUS: Partial<Record<number, string>> = {
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  431: 'headers_too_large',
};

/** An error fastify raised for a client's mistake (a 4xx `statusCode`), as the spec's error object; undefined for anything else. */
export function clientMistakeReply(error: unknown): { status: number; body: ErrorObject } | undefined {
  const status = (error as { statusCode?: unknown } | undefined)?.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  return { status, body: errorObject(CODE_BY_STATUS[status] ?? 'invalid_request', (error as Error).message) };
}

/**
 * A service answer that does not match the spec (`InvalidResponseError`), wherever a route met it,
 * as 502 `invalid_response`: the service's fault, not this server's (the client logged it); undefined
 * for anything else.
 */
export function serviceFailureReply(error: unknown): { status: number; body: ErrorObject } | undefined {
  if (!(error instanceof InvalidResponseError)) return undefined;
  return { status: CHECKOUT_ERROR_STATUS.invalid_response, body: errorObject('invalid_response', `${error.summary}.`) };
}

/**
 * An app's root error handler: a client's mistake answered with its status and the spec's error
 * object, a service's malformed answer 502, anything else logged and answered 500 `internal_error`
 * (never fastify's own shape).
 */
export function specErrorHandler(logger: Logger, app: string) {
  return async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const mistake = clientMistakeReply(error) ?? serviceFailureReply(error);
    if (mistake) return reply.code(mistake.status).send(mistake.body);
    const path = request.url.split('?')[0];
    logger.error({ err: error, method: request.method, url: path }, `${app}: ${request.method} ${path} failed`);
    return reply.code(500).send(errorObject('internal_error', 'The request failed; see the process log.'));
  };
}

/** The methods a route may take, in the order an `Allow` header names them. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const satisfies readonly HTTPMethods[];

/**
 * An app's (or a plugin's) not-found handler, with the spec's error object: a path the app serves
 * with other methods is a 405 `method_not_allowed` naming them (`Allow`), so `GET /checkout` says to
 * POST instead of that nothing is there; any other path a 404 `not_found`, its message ending in
 * `hint` (`nothing` says what is not there: by default "No route GET /x").
 */
export function notFoundReply(hint = '', nothing: (method: string, path: string) => string = (method, path) => `No route ${method} ${path}`) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]!;
    const allowed = METHODS.filter((method) => method !== request.method && request.server.findRoute({ method, url: path }) !== null);
    if (allowed.length > 0) {
      const message = `${request.method} ${path} is not served: use ${allowed.join(' or ')}.`;
      return reply.code(405).header('allow', allowed.join(', ')).send(errorObject('method_not_allowed', message));
    }
    return reply.code(404).send(errorObject('not_found', `${nothing(request.method, path)}${hint}.`));
  };
}

/** What Node's HTTP parser refused, as a status and the spec's error object. */
function unreadableRequest(code: string | undefined): { status: number; body: ErrorObject } {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, body: errorObject('request_timeout', 'The request did not arrive in time.') };
  if (code === 'HPE_HEADER_OVERFLOW')
    return { status: 431, body: errorObject('headers_too_large', "The request's headers are larger than this server accepts.") };
  return { status: 400, body: errorObject('invalid_request', `The request is not valid HTTP/1.1 (${code ?? 'unreadable'}).`) };
}

/** The fastify settings a server it makes takes on (fastify's own defaults filled in). */
interface ServerSettings {
  http?: object;
  keepAliveTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
  maxRequestsPerSocket: number;
}

/**
 * Fastify server options under which the errors that happen before any route (a URL that does
 * not decode, bytes that are not HTTP, headers too large, an HTTP/1.1 request without `Host`, a
 * request that does not arrive in time) answer with the spec's error object like every other
 * error, instead of fastify's and Node's own shapes.
 */
export const SPEC_ERROR_OPTIONS = {
  /**
   * A request whose headers and body have not all arrived within 30 s (Node checks every 30 s) is
   * answered 408 `request_timeout` and its connection closed. fastify's default, 0, lets a client
   * that trickles a body hold its connection for ever, and enough of them keep webhooks out.
   */
  requestTimeout: 30_000,
  /**
   * Fastify's HTTP/1.1 server, made here because Node itself answers a request without `Host` with
   * an empty 400: that check is done here instead, with the spec's error object.
   */
  serverFactory(handler: (request: IncomingMessage, response: ServerResponse) => void, settings: Record<string, unknown>) {
    const options = settings as unknown as ServerSettings;
    const server = createServer({ ...options.http, requireHostHeader: false }, (request, response) => {
      // HTTP/1.0 may leave `Host` out; HTTP/1.1 must send it (RFC 9112, section 3.2).
      if (request.headers.host === undefined && request.httpVersion === '1.1') {
        const json = JSON.stringify(errorObject('invalid_request', 'The request has no Host header, which HTTP/1.1 requires.'));
        response.writeHead(400, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json), connection: 'close' });
        response.end(json);
        return;
      }
      handler(request, response);
    });
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    // Node takes the shorter of the two as the headers' limit and the longer as the whole request's.
    if (options.requestTimeout > 0) server.headersTimeout = Math.min(server.headersTimeout, options.requestTimeout);
    server.setTimeout(options.connectionTimeout);
    if (options.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    return server;
  },
  frameworkErrors(error: Error, _request: FastifyRequest, reply: FastifyReply) {
    const answer = clientMistakeReply(error) ?? { status: 500, body: errorObject('internal_error', error.message) };
    void reply.code(answer.status).send(answer.body);
  },
  clientErrorHandler(error: Error & { code?: string }, socket: Duplex) {
    // A reset connection has nobody left to answer (as fastify's own handler does).
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    if (socket.writable) {
      const { status, body } = unreadableRequest(error.code);
      const json = JSON.stringify(body);
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
      );
    }
    socket.destroy(error);
  },
} satisfies Pick<FastifyServerOptions, 'requestTimeout' | 'frameworkErrors' | 'clientErrorHandler' | 'serverFactory'>;
