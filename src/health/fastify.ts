import type { FastifyPluginAsync } from 'fastify';
import type { Health } from './readiness.js';

/**
 * `GET /healthz` (the process answers) and `GET /readyz` (200 when ready, 503 with the reasons).
 * Open to every caller, as orchestrators probe from outside: they show counts and reasons, no data.
 */
export const healthRoutes: FastifyPluginAsync<{ health: Health }> = async (app, options) => {
  app.get('/healthz', async (_request, reply) => reply.header('cache-control', 'no-store').send({ ok: true }));
  app.get('/readyz', async (_request, reply) => {
    const readiness = await options.health.ready();
    return reply
      .code(readiness.ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send(readiness);
  });
};
