import type Fastify from 'fastify';
import { importOptionalPeer } from '../errors/index.js';

/**
 * fastify's factory, imported when something is about to serve rather than when its module is
 * imported: fastify is an optional peer, so `checkout-kit --version`, `init` or `reconcile` run
 * without it, and `neededBy` (a command, the demo) says in its error that it needs it.
 */
export async function loadFastify(neededBy: string): Promise<typeof Fastify> {
  return (await importOptionalPeer('fastify', neededBy, () => import('fastify'))).default;
}
