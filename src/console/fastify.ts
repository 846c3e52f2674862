import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { decideAccess, SESSION_COOKIE, sessionValue, tokenMatches } from '../access/index.js';
import { clientMistakeReply, notFoundReply, serviceFailureReply } from '../fastify/error-replies.js';
import { formBody } from '../fastify/form-body.js';
import { storeUnavailableAnswer } from '../checkout/http.js';
import { errorObject } from '../schemas/error.js';
import { ACTIONS, isActionName } from './actions.js';
import { consoleContext, type ConsoleContext, type ConsoleOptions } from './context.js';
import { LOCAL_TIMES_SCRIPT_SOURCE } from './local-times.js';
import { confirmPage, resultPage } from './pages/action-pages.js';
import { deadLettersPage } from './pages/dead-letters.js';
import { errorPage } from './pages/error.js';
import { merchantsPage } from './pages/merchants.js';
import { eventPage, eventsPage } from './pages/events.js';
import { logPage } from './pages/log.js';
import { consolePath, loginPage } from './pages/login.js';
import { overviewPage } from './pages/overview.js';
import { resourcePage, resourcesPage } from './pages/resources.js';
import { search } from './pages/search.js';
import { runsPage } from './pages/runs.js';
import { ConsoleRequestError } from './request-error.js';

/** Pages are built from untrusted stored data: even a missed escape could run no script but the console's own. */
const SECURITY_HEADERS = {
  'content-security-policy': `default-src 'none'; script-src ${LOCAL_TIMES_SCRIPT_SOURCE}; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  // Nothing leaves for other sites; same-origin form posts keep their Origin header.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

const wantsHtml = (request: FastifyRequest) => (request.headers.accept ?? '').includes('text/html');

/** The spec's error object in a JSON reply, if that is what it is. */
function errorOf(payload: string): { code: string; message: string } | undefined {
  try {
    const error = (JSON.parse(payload) as { error?: { code?: unknown; message?: unknown } } | null)?.error;
    return typeof error?.code === 'string' && typeof error.message === 'string' ? { code: error.code, message: error.message } : undefined;
  } catch {
    return undefined;
  }
}

function sendHtml(reply: FastifyReply, status: number, text: string) {
  return reply.code(status).type('text/html; charset=utf-8').send(text);
}

/**
 * A POST must come from a page of this console. Browsers say where a form was submitted from:
 * `Sec-Fetch-Site` (modern ones), else `Origin`. A client that sends neither is not a browser
 * tricked by another site; the CSRF token still has to match.
 */
function sameOrigin(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    const from = new URL(origin);
    // Through URL both ways, so that a default port written in one and not the other still matches.
    return from.host === new URL(`${from.protocol}//${request.headers.host ?? ''}`).host;
  } catch {
    return false;
  }
}

function sessionCookie(context: ConsoleContext, request: FastifyRequest, value: string, maxAge: number): string {
  const secure = request.protocol === 'https' || request.headers['x-forwarded-proto'] === 'https';
  return `${SESSION_COOKIE}=${value}; Path=${context.prefix || '/'}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
}

function routes(scope: FastifyInstance, context: ConsoleContext): void {
  scope.get('/', async (_request, reply) => sendHtml(reply, 200, await overviewPage(context)));
  scope.get('/events', async (request, reply) => sendHtml(reply, 200, await eventsPage(context, request.query)));
  // A wildcard, not `:id`: an event id may be 255 characters, and fastify refuses a `:param` over 100 (its
  // maxParamLength, the app's own setting when the console is registered in another app) with 414.
  scope.get<{ Params: { '*': string } }>('/events/*', async (request, reply) =>
    sendHtml(reply, 200, await eventPage(context, request.params['*'], request.query)),
  );
  for (const kind of ['payment', 'invoice'] as const) {
    scope.get(`/${kind}s`, async (request, reply) => sendHtml(reply, 200, await resourcesPage(context, kind, request.query)));
    scope.get<{ Params: { id: string } }>(`/${kind}s/:id`, async (request, reply) =>
      sendHtml(reply, 200, await resourcePage(context, kind, request.params.id, request.query)),
    );
  }
  scope.get('/search', async (request, reply) => {
    const found = await search(context, request.query);
    return 'redirect' in found ? reply.redirect(found.redirect, 303) : sendHtml(reply, 200, found.html);
  });
  scope.get('/runs', async (request, reply) => sendHtml(reply, 200, await runsPage(context, request.query)));
  scope.get('/dead-letters', async (request, reply) => sendHtml(reply, 200, await deadLettersPage(context, request.query)));
  scope.get('/merchants', async (request, reply) => sendHtml(reply, 200, await merchantsPage(context, request.query)));
  scope.get('/log', async (request, reply) => sendHtml(reply, 200, await logPage(context, request.query)));

  scope.get<{ Params: { name: string } }>('/actions/:name', async (request, reply) => {
    const { name } = request.params;
    if (!isActionName(name))
      throw new ConsoleRequestError(404, 'not_found', `No console action "${name}": the actions are ${Object.keys(ACTIONS).join(', ')}.`);
    const spec = ACTIONS[name];
    const prepared = await spec.prepare(context, { ...(request.query as Record<string, unknown>) });
    return sendHtml(reply, 200, confirmPage(context, name, spec, prepared));
  });

  scope.post<{ Params: { name: string } }>('/actions/:name', async (request, reply) => {
    const { name } = request.params;
    if (!isActionName(name))
      throw new ConsoleRequestError(404, 'not_found', `No console action "${name}": the actions are ${Object.keys(ACTIONS).join(', ')}.`);
    if (!sameOrigin(request))
      throw new ConsoleRequestError(403, 'cross_site_request', 'This action was posted from another site: open the console and confirm there.');
    const { nonce, csrf, ...input } = (request.body ?? {}) as Record<string, unknown>;
    if (!context.csrf.verify(name, typeof nonce === 'string' ? nonce : undefined, typeof csrf === 'string' ? csrf : undefined)) {
      throw new ConsoleRequestError(
        403,
        'invalid_csrf_token',
        'This confirmation is not valid (it is older than the console process, or was not made by it): open the action again and confirm.',
      );
    }
    const spec = ACTIONS[name];
    const via = decideAccess({ remoteAddress: request.raw.socket.remoteAddress, headers: request.headers }, context.token);
    const { result, repeated } = await context.once.run(nonce as string, async () => {
      const prepared = await spec.prepare(context, input);
      const outcome = await prepared.perform();
      // Every action is logged: the process log and the console's own log in the store.
      context.logger.info(
        { action: name, target: prepared.target, ok: outcome.ok, via: via.ok ? via.via : undefined },
        `console action ${name}: ${outcome.message}`,
      );
      await context.store
        .appendActivity(
          { subject: 'console', kind: name, data: { message: outcome.message, target: prepared.target, ok: outcome.ok, via: via.ok ? via.via : 'unknown' } },
          context.clock(),
        )
        .catch((error: unknown) => context.logger.warn({ err: String(error) }, `could not log the console action in the store: ${String(error)}`));
      return outcome;
    });
    return sendHtml(reply, 200, resultPage(context, spec, result, repeated));
  });
}

/**
 * The operator console as a fastify plugin: server-rendered pages under `prefix`, no
 * build step. With `CHECKOUT_CONSOLE_TOKEN` set, every request needs it (this machine's too: a browser
 * signs in on the page every refused request gets); without it, only this machine is let in.
 * Actions are confirmed on a page, posted with a CSRF token, done once per confirmation, logged.
 * @example
 * await app.register(checkoutConsole, { store, engine, token: process.env.CHECKOUT_CONSOLE_TOKEN });
 */
export const checkoutConsole: FastifyPluginAsync<ConsoleOptions> = async (app, options) => {
  const context = consoleContext(options);
  await app.register(
    async (scope) => {
      await scope.register(await formBody(), { bodyLimit: 16_384 });
      scope.addHook('onSend', async (_request, reply, payload) => {
        reply.headers(SECURITY_HEADERS);
        return payload;
      });
      // A browser gets a refusal (a bad filter, a missing payment, an expired confirmation, an unknown
      // page) as a console page with the same status; programs keep the error object.
      scope.addHook('onSend', async (request, reply, payload) => {
        if (reply.statusCode < 400 || !wantsHtml(request) || typeof payload !== 'string') return payload;
        if (!String(reply.getHeader('content-type') ?? '').startsWith('application/json')) return payload;
        const error = errorOf(payload);
        if (!error) return payload;
        const signedIn = decideAccess({ remoteAddress: request.raw.socket.remoteAddress, headers: request.headers }, context.token).ok;
        reply.type('text/html; charset=utf-8');
        return errorPage(context, reply.statusCode, error, signedIn);
      });
      scope.addHook('onRequest', async (request, reply) => {
        // Signing in is the one thing a request without the token may do (its page is the refusal itself).
        if (request.method === 'POST' && request.routeOptions.url === `${context.prefix}/login`) return;
        const decision = decideAccess({ remoteAddress: request.raw.socket.remoteAddress, headers: request.headers }, context.token);
        if (decision.ok) return;
        reply.header('www-authenticate', 'Bearer realm="checkout-kit"');
        if (wantsHtml(request))
          return sendHtml(reply, 401, loginPage(context, decision.message, request.method === 'GET' ? consolePath(context, request.url) : undefined));
        return reply.code(401).send(errorObject('unauthorized', decision.message));
      });
      // A page asked for with a trailing slash (typed so, or a link copied with one) is that page,
      // not a payment or event with an empty id ("No payment  in the store").
      scope.addHook('onRequest', async (request, reply) => {
        if (request.method !== 'GET' && request.method !== 'HEAD') return;
        const queryAt = request.url.indexOf('?');
        const path = queryAt === -1 ? request.url : request.url.slice(0, queryAt);
        if (!path.endsWith('/') || path === `${context.prefix}/`) return;
        // One leading slash: never `//host`, which a browser would take for another site.
        const page = path.replace(/\/+$/, '').replace(/^\/+/, '/') || '/';
        return reply.redirect(page + (queryAt === -1 ? '' : request.url.slice(queryAt)), 308);
      });
      scope.setErrorHandler(async (error, request, reply) => {
        if (error instanceof ConsoleRequestError) return reply.code(error.status).send(errorObject(error.code, error.message));
        // fastify's own 4xx (body too large, media type), coded as serve's root codes them.
        const mistake = clientMistakeReply(error);
        if (mistake) return reply.code(mistake.status).send(errorObject(mistake.body.error.code, `${mistake.body.error.message}.`));
        const serviceFailure = serviceFailureReply(error);
        if (serviceFailure) return reply.code(serviceFailure.status).send(serviceFailure.body);
        // A store busy or out of space for a while: the page or the confirmation can be sent again (an action not done is not remembered).
        const unavailable = storeUnavailableAnswer(error, request.method === 'POST' ? 'console action' : 'console page');
        if (unavailable) {
          context.logger.warn({ err: String(error), url: request.url }, `console: the store failed: ${String(error)}`);
          return reply.code(unavailable.status).headers(unavailable.headers).send(unavailable.body);
        }
        context.logger.error({ err: String(error), url: request.url }, `console page failed: ${String(error)}`);
        return reply
          .code(500)
          .send(errorObject('internal_error', `The console could not answer: ${(error as Error).message.replace(/\.$/, '')}. See the process log.`));
      });
      scope.setNotFoundHandler(notFoundReply(`: start at ${context.prefix}/`, (method, path) => `No console page at ${method} ${path}`));
      scope.get('/login', async (_request, reply) => reply.redirect(`${context.prefix}/`, 303));
      scope.post('/login', async (request, reply) => {
        const { token, next } = (request.body ?? {}) as { token?: unknown; next?: unknown };
        const then = consolePath(context, next);
        if (context.token === undefined || typeof token !== 'string' || !tokenMatches(token, context.token)) {
          context.logger.warn({ remote: request.raw.socket.remoteAddress }, 'console sign-in refused: wrong token');
          return sendHtml(
            reply.header('www-authenticate', 'Bearer realm="checkout-kit"'),
            401,
            loginPage(context, 'Wrong token, or no CHECKOUT_CONSOLE_TOKEN is configured.', then),
          );
        }
        return reply.header('set-cookie', sessionCookie(context, request, sessionValue(context.token), 12 * 3600)).redirect(then ?? `${context.prefix}/`, 303);
      });
      scope.post('/logout', async (request, reply) => reply.header('set-cookie', sessionCookie(context, request, '', 0)).redirect(`${context.prefix}/`, 303));
      routes(scope, context);
    },
    { prefix: context.prefix },
  );
  app.addHook('onClose', async () => context.settle());
};
