import type { HeaderGetter } from '../schemes/scheme.js';

/** Where the receiver may be running, for the fix the doctor writes. `proxy`: something in front of the app. */
export type Framework = 'fastify' | 'express' | 'koa' | 'hono' | 'next' | 'nest' | 'node' | 'web' | 'proxy' | 'unknown';

/** How to give the receiver the exact bytes, per framework. */
export const RAW_BODY_FIX: Record<Framework, string> = {
  fastify:
    'register the checkoutWebhooks plugin for the route (it reads the raw body itself) and add no content-type parser, preHandler or proxy that rewrites the body of POST /webhooks/checkout.',
  express:
    "mount createNodeHandler(receiver) before app.use(express.json()) (or give its route express.raw({ type: 'application/json' }) instead of express.json()), or keep the bytes with express.json({ verify: (req, _res, buf) => { req.rawBody = buf; } }); never hand it req.body from a JSON or urlencoded parser.",
  koa: 'mount the webhook route before koa-bodyparser (or exclude it from the parser) and hand ctx.req to createNodeHandler(receiver).',
  hono: 'pass c.req.raw to createWebHandler(receiver); do not call c.req.json(), c.req.text() or a validator on this route first.',
  next: 'in the App Router route handler export POST = createWebHandler(receiver) (it reads request.arrayBuffer()); never call request.json() first. In the Pages Router set export const config = { api: { bodyParser: false } }.',
  nest: 'create the app with NestFactory.create(AppModule, { rawBody: true }) and give the receiver req.rawBody, not the parsed @Body().',
  node: 'hand the request stream to createNodeHandler(receiver) untouched; do not read, decode or re-encode it first.',
  web: 'pass the Request itself to createWebHandler(receiver); do not read request.json() or request.text() first.',
  proxy:
    'a proxy in front of this app (the delivery carries Via / Forwarded headers) most likely rewrote the body: make it pass POST /webhooks/checkout bodies through byte for byte (no JSON re-formatting, charset conversion or form handling).',
  unknown:
    "give the receiver the exact bytes received. Express: mount it before express.json() or use express.raw({ type: 'application/json' }); Next.js, Hono, Workers: pass the Request to createWebHandler; NestJS: rawBody: true and req.rawBody; fastify: the checkoutWebhooks plugin; a proxy: pass the body through unchanged. Set the receiver's doctor.framework option for advice on one framework.",
};

/**
 * The framework to write the fix for: the configured one, else a guess from request headers that
 * hosting platforms and proxies add. Only a hint for the advice; it never changes verification.
 */
export function guessFramework(header: HeaderGetter, configured: Framework | undefined): Framework {
  if (configured !== undefined && configured !== 'unknown') return configured;
  if (header('x-vercel-id') !== undefined || header('x-nextjs-data') !== undefined) return 'next';
  if (header('cf-ray') !== undefined || header('cf-worker') !== undefined) return 'web';
  if (header('via') !== undefined || header('forwarded') !== undefined || header('x-forwarded-for') !== undefined) return 'proxy';
  return 'unknown';
}
