import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { samplePayment } from '../../../src/testing/index.js';
import type { Payment } from '../../../src/schemas/index.js';
import { TEST_KEYS } from '../../support/fixtures.js';

/**
 * A stand-in for the checkout service's Get payment (and an empty List invoices), on 127.0.0.1,
 * that misbehaves per payment until `recover()`: 500s, 429s with Retry-After, answers that never
 * come within the client's timeout, truncated JSON, another payment than the one asked for, and
 * amounts that go backwards. Every read is counted.
 */
export type FaultMode = 'ok' | 'http500' | 'rate429' | 'timeout' | 'truncated' | 'wrongId' | 'backwards';

interface Tracked {
  mode: FaultMode;
  /** What the service really knows now. */
  truth: Payment;
  reads: number;
  /** Answers by kind: '200', '500', '429', 'held', 'truncated', 'wrong-id', 'backwards'. */
  served: Record<string, number>;
}

export interface StandIn {
  url: string;
  app: FastifyInstance;
  /** Follow a payment (its truth) under a fault mode. */
  add(mode: FaultMode, truth: Payment): void;
  /** Change what the service knows of a payment (e.g. the buyer paid). */
  setTruth(id: string, truth: Payment): void;
  reads(id: string): number;
  served(id: string): Record<string, number>;
  totals(): Record<string, number>;
  /** Held requests the client gave up on (its timeout). */
  timedOut(): number;
  /** From now on every payment is answered correctly; held requests are answered too. */
  recover(): void;
  close(): Promise<void>;
}

/** A payment of `amount` that has received `received`, expiring `expiresInMs` from now. */
export function payment(id: string, amount: string, received: string, expiresInMs = 3_600_000, overrides: Partial<Payment> = {}): Payment {
  const paid = received === amount;
  return samplePayment({
    id,
    amount,
    amountReceived: received,
    remaining: paid ? '0' : undefined,
    status: paid ? 'PAID' : received === '0' ? 'CREATED' : 'PARTIALLY_PAID',
    expiresAt: new Date(Date.now() + expiresInMs).toISOString(),
    referenceId: `order-${id.slice(0, 8)}`,
    ...overrides,
  });
}

/**
 * `answerUnknown`: a payment nobody `add`ed is followed as answered correctly with what it gives
 * (else such a read is a 404).
 */
export async function startStandIn(options: {
  apiKey: string;
  otherPayment: Payment;
  answerUnknown?: (id: string) => Payment;
  /** The `Retry-After` of a 429 (`rate429`), in seconds. @default 1 */
  retryAfterSeconds?: number;
}): Promise<StandIn> {
  const tracked = new Map<string, Tracked>();
  const totals: Record<string, number> = {};
  let recovered = false;
  let timedOut = 0;
  const held = new Set<() => void>();
  const app = Fastify({ forceCloseConnections: true });

  const count = (entry: Tracked, kind: string) => {
    entry.served[kind] = (entry.served[kind] ?? 0) + 1;
    totals[kind] = (totals[kind] ?? 0) + 1;
  };

  app.get('/v1/invoices', async () => {
    totals.listInvoices = (totals.listInvoices ?? 0) + 1;
    return [];
  });

  app.get<{ Params: { id: string } }>('/v1/payments/:id', async (request, reply) => {
    totals.reads = (totals.reads ?? 0) + 1;
    if (request.headers.authorization !== `Bearer ${options.apiKey}` || !request.headers['x-request-signature']) {
      return reply.code(401).send({ error: { code: 'unauthorized', message: 'bad key or signature' } });
    }
    if (!tracked.has(request.params.id) && options.answerUnknown)
      tracked.set(request.params.id, { mode: 'ok', truth: options.answerUnknown(request.params.id), reads: 0, served: {} });
    const entry = tracked.get(request.params.id);
    if (!entry) return reply.code(404).send({ error: { code: 'not_found', message: 'no such payment' } });
    entry.reads += 1;
    const mode = recovered ? 'ok' : entry.mode;
    switch (mode) {
      case 'http500':
        count(entry, '500');
        return reply.code(500).send({ error: { code: 'internal_error', message: 'the service is having a bad day' } });
      case 'rate429':
        count(entry, '429');
        return reply
          .code(429)
          .header('retry-after', String(options.retryAfterSeconds ?? 1))
          .send({ error: { code: 'rate_limited', message: 'slow down' } });
      case 'timeout': {
        count(entry, 'held');
        // Never answered while the fault lasts; answered correctly once the service recovers.
        await new Promise<void>((resolve) => {
          const release = () => {
            held.delete(release);
            resolve();
          };
          held.add(release);
          reply.raw.once('close', () => {
            if (!reply.raw.writableFinished) {
              timedOut += 1;
              release();
            }
          });
        });
        if (reply.raw.destroyed) return reply;
        count(entry, '200');
        return entry.truth;
      }
      case 'truncated': {
        count(entry, 'truncated');
        const text = JSON.stringify(entry.truth);
        return reply
          .code(200)
          .type('application/json')
          .send(text.slice(0, Math.floor(text.length / 2)));
      }
      case 'wrongId':
        count(entry, 'wrong-id');
        return options.otherPayment;
      case 'backwards': {
        // Paid on the first read; every later read shows less received, and past expiry.
        if (entry.reads === 1) {
          count(entry, '200');
          return entry.truth;
        }
        count(entry, 'backwards');
        const less = entry.reads % 2 === 0 ? '4.00' : '0';
        return {
          ...entry.truth,
          amountReceived: less,
          remaining: undefined,
          status: 'PARTIALLY_PAID',
          expiresAt: new Date(Date.now() - 60_000).toISOString(),
          updatedAt: new Date().toISOString(),
        };
      }
      default:
        count(entry, '200');
        return entry.truth;
    }
  });

  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    app,
    add: (mode, truth) => void tracked.set(truth.id, { mode, truth, reads: 0, served: {} }),
    setTruth: (id, truth) => {
      const entry = tracked.get(id);
      if (entry) entry.truth = truth;
    },
    reads: (id) => tracked.get(id)?.reads ?? 0,
    served: (id) => ({ ...(tracked.get(id)?.served ?? {}) }),
    totals: () => ({ ...totals }),
    timedOut: () => timedOut,
    recover: () => {
      recovered = true;
      for (const release of [...held]) release();
    },
    close: async () => {
      recovered = true;
      for (const release of [...held]) release();
      await app.close();
    },
  };
}

/**
 * The environment of a `serve` (or `reconcile`) confirming against the stand-in: the store in
 * `dir`/store, RECORDING_HANDLERS in `dir`/fulfillment.mjs recording to `calls`.
 */
export function serveEnvFor(standIn: StandIn, { dir, secret, calls }: { dir: string; secret: string; calls: string }): Record<string, string> {
  return {
    CHECKOUT_BASE_URL: standIn.url,
    CHECKOUT_API_KEY: TEST_KEYS.apiKey,
    CHECKOUT_SIGNING_SECRET: TEST_KEYS.signingSecret,
    CHECKOUT_INVOICE_KEY: TEST_KEYS.invoiceKey,
    CHECKOUT_WEBHOOK_SECRET: secret,
    CHECKOUT_STORE: `file:${join(dir, 'store')}`,
    CHECKOUT_HANDLERS: join(dir, 'fulfillment.mjs'),
    HOSTILE_CALLS: calls,
  };
}
