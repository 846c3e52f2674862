import { listenOnLoopback } from '../support/ports.js';
import { removeTempDirs, tempDir as makeTempDir } from '../support/temp-dirs.js';
import Fastify from 'fastify';
import { WebhookVerificationError } from '../../src/errors/index.js';
import { errorObject } from '../../src/schemas/index.js';
import { createVerifier, type WebhookScheme } from '../../src/webhooks/index.js';

export const tempDir = (prefix = 'ck-devtools-') => makeTempDir(prefix);

export { removeTempDirs };

export interface Delivery {
  headers: Record<string, string>;
  /** Exactly the bytes received. */
  body: Buffer;
  /** Whether the body and headers verified with the receiver's secret (tolerance 300 s). */
  verified: boolean;
  verifyError: string | undefined;
}

export interface TestReceiver {
  url: string;
  deliveries: Delivery[];
  close(): Promise<void>;
}

/**
 * A real receiver on 127.0.0.1, port 0. Keeps each raw body and verifies it with `createVerifier`
 * (Standard Webhooks, default tolerance) when given a secret. Answers 401 `invalid_signature` (the
 * spec's error object, with the verifier's message) to a delivery that does not verify, else
 * `status(webhookId)` (default 204, no body).
 */
export async function startTestReceiver(
  options: { secret?: string; scheme?: WebhookScheme; status?: (webhookId: string | undefined) => number } = {},
): Promise<TestReceiver> {
  const verify = options.secret ? createVerifier({ secrets: options.secret, scheme: options.scheme }) : undefined;
  const deliveries: Delivery[] = [];
  const app = Fastify({ forceCloseConnections: true });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.post('/webhooks/checkout', async (request, reply) => {
    const body = request.body as Buffer;
    const headers = request.headers as Record<string, string>;
    let verifyError: string | undefined;
    try {
      verify?.({ headers, body });
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      verifyError = error.message;
    }
    deliveries.push({ headers, body, verified: verify !== undefined && verifyError === undefined, verifyError });
    if (verifyError) return reply.code(401).send(errorObject('invalid_signature', verifyError));
    reply.code(options.status?.(headers['webhook-id']) ?? 204);
    return '';
  });
  const port = await listenOnLoopback(app);
  return { url: `http://127.0.0.1:${port}/webhooks/checkout`, deliveries, close: () => app.close() };
}

/** A receiver on 127.0.0.1 that answers every POST with `status` and the text `body` (e.g. a proxy's error page). */
export async function startPlainReceiver(status: number, body: string): Promise<{ url: string; close(): Promise<void> }> {
  const app = Fastify({ forceCloseConnections: true });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));
  app.post('/*', async (_request, reply) => reply.code(status).type('text/html').send(body));
  const port = await listenOnLoopback(app);
  return { url: `http://127.0.0.1:${port}/webhooks/checkout`, close: () => app.close() };
}
