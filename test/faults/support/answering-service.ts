import Fastify from 'fastify';
import type { Payment } from '../../../src/schemas/index.js';
import { samplePayment } from '../../../src/testing/index.js';
import { TEST_KEYS } from '../../support/fixtures.js';

/**
 * The checkout service as these fault tests need it: on 127.0.0.1, answering Get payment for any
 * id with `answer(id)` (and List invoices with none), so that `serve`, which confirms every event
 * with the service before a handler runs, can be started as a merchant runs it. `env` configures
 * a CLI process for it.
 */
export interface AnsweringService {
  url: string;
  env: { CHECKOUT_BASE_URL: string; CHECKOUT_API_KEY: string; CHECKOUT_SIGNING_SECRET: string };
  /** Get payment calls answered. */
  reads(): number;
  close(): Promise<void>;
}

/** Every payment as just created (nothing received: no handler runs), the default. */
export const createdPayment = (id: string): Payment => samplePayment({ id });
/** Every payment paid in full, 10.00 of 10.00 (what `paidDelivery` events carry). */
export const paidPayment = (id: string): Payment => samplePayment({ id, status: 'PAID', amount: '10.00', amountReceived: '10.00', remaining: '0' });

export async function startAnsweringService(answer: (id: string) => Payment = createdPayment): Promise<AnsweringService> {
  const app = Fastify({ forceCloseConnections: true });
  let reads = 0;
  app.get<{ Params: { id: string } }>('/v1/payments/:id', async (request) => {
    reads += 1;
    return answer(request.params.id);
  });
  app.get('/v1/invoices', async () => []);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    env: { CHECKOUT_BASE_URL: url, CHECKOUT_API_KEY: TEST_KEYS.apiKey, CHECKOUT_SIGNING_SECRET: TEST_KEYS.signingSecret },
    reads: () => reads,
    close: () => app.close(),
  };
}
