import Fastify from 'fastify';
import { sampleMerchant, samplePayment } from './fixtures.js';
import type { Merchant, Payment } from '../../src/schemas/index.js';
import { listenOnLoopback } from './ports.js';

/** An error answer that blames the request (400, 422) with a body that is not the spec's error object. */
export interface OffSpecAnswer {
  status: 400 | 422;
  contentType?: string;
  body: string;
}

/** The shapes an off-spec error answer comes in: a proxy's HTML page, nothing, plain text, JSON of another shape. */
export const OFF_SPEC_ANSWERS = {
  html: { status: 400, contentType: 'text/html', body: '<html><body><h1>400 Bad Request</h1></body></html>' },
  empty: { status: 422, body: '' },
  text: { status: 400, contentType: 'text/plain', body: 'bad request' },
  'other JSON': { status: 422, contentType: 'application/json', body: JSON.stringify({ message: 'Unprocessable', errors: ['amount'] }) },
} satisfies Record<string, OffSpecAnswer>;

/** A create the stand-in was asked for, with the Idempotency-Key it came with. */
export interface CreateCall {
  path: string;
  idempotencyKey: string | undefined;
}

/**
 * The service on 127.0.0.1: creates payments (`POST /v1/payments`) and partner merchants
 * (`POST /v1/partner/merchants`) once per Idempotency-Key (201, then 200 with the same one), and
 * reads payments; while `offSpec` is set, every create and read answers it instead, and while
 * `answerMerchant` is set, created merchants are answered changed by it.
 */
export async function offSpecService() {
  const payments = new Map<string, Payment>();
  const merchants = new Map<string, Merchant>();
  const creates: CreateCall[] = [];
  const state: { offSpec: OffSpecAnswer | undefined; answerMerchant: ((merchant: Merchant) => Merchant) | undefined } = {
    offSpec: undefined,
    answerMerchant: undefined,
  };
  const app = Fastify();
  const url = () => `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

  app.addHook('onRequest', async (request, reply) => {
    const key = request.headers['idempotency-key'];
    if (request.method === 'POST') creates.push({ path: request.url, idempotencyKey: typeof key === 'string' ? key : undefined });
    const answer = state.offSpec;
    if (!answer) return;
    if (answer.contentType) void reply.header('content-type', answer.contentType);
    return reply.code(answer.status).send(answer.body);
  });
  /** The resource stored under the request's key, made by `make` the first time. */
  const once = <T>(stored: Map<string, T>, key: string, make: () => T) => {
    const found = stored.get(key);
    if (found) return { status: 200, resource: found };
    const resource = make();
    stored.set(key, resource);
    return { status: 201, resource };
  };
  app.post('/v1/payments', async (request, reply) => {
    const asked = request.body as { amount: string; referenceId: string; successUrl?: string; cancelUrl?: string };
    const { status, resource } = once(payments, request.headers['idempotency-key'] as string, () => {
      const payment = samplePayment({ ...asked, remaining: asked.amount });
      return { ...payment, checkoutUrl: `${url()}/pay/${payment.id}` };
    });
    return reply.code(status).send(resource);
  });
  app.get<{ Params: { id: string } }>('/v1/payments/:id', async (request, reply) => {
    const payment = [...payments.values()].find((p) => p.id === request.params.id);
    return payment ?? reply.code(404).send({ error: { code: 'not_found', message: 'no such payment' } });
  });
  app.post('/v1/partner/merchants', async (request, reply) => {
    const asked = request.body as { externalTenantId: string; name: string; email: string };
    const { status, resource } = once(merchants, request.headers['idempotency-key'] as string, () => sampleMerchant(asked));
    return reply.code(status).send(state.answerMerchant ? state.answerMerchant(resource) : resource);
  });

  await listenOnLoopback(app);
  return {
    url: url(),
    /** While set, the service answers every call with it. */
    set offSpec(answer: OffSpecAnswer | undefined) {
      state.offSpec = answer;
    },
    /** While set, a created merchant is answered as it makes it (the merchant kept stays as created). */
    set answerMerchant(change: ((merchant: Merchant) => Merchant) | undefined) {
      state.answerMerchant = change;
    },
    /** Every create asked for, answered or not, in order. */
    creates,
    /** The payments created, by Idempotency-Key. */
    payments,
    /** The merchants created, by Idempotency-Key. */
    merchants,
    close: () => app.close(),
  };
}
