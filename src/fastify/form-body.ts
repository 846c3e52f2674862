import type { FastifyFormbodyOptions } from '@fastify/formbody';
import type { FastifyPluginCallback } from 'fastify';

/**
 * `@fastify/formbody`, loaded when a plugin that reads forms is registered rather than when its
 * module is imported: importing `checkout-kit` loads no fastify code.
 */
export async function formBody(): Promise<FastifyPluginCallback<FastifyFormbodyOptions>> {
  return (await import('@fastify/formbody')).default;
}
