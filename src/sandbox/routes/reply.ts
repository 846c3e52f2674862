import type { FastifyReply } from 'fastify';

/** Contract 3g: 201 for a create, 200 for an idempotent replay (marked `Idempotent-Replayed: true`). */
export function sendCreated<T>(reply: FastifyReply, replayed: boolean, body: T): T {
  reply.code(replayed ? 200 : 201);
  if (replayed) reply.header('idempotent-replayed', 'true');
  return body;
}
