import type { Payment } from '../../../src/schemas/index.js';
import { samplePayment } from '../../../src/testing/index.js';
import { TEST_KEYS } from '../../support/fixtures.js';
import { startStandIn } from './service-standin.js';

/**
 * The checkout service as these fault tests need it: the fault stand-in (`startStandIn`) with no
 * fault, answering Get payment for any id with `answer(id)`, so that `serve`, which confirms every
 * event with the service before a handler runs, can be started as a merchant runs it. `env`
 * configures a CLI process for it.
 */
export interface AnsweringService {
  url: string;
  env: { CHECKOUT_BASE_URL: string; CHECKOUT_API_KEY: string; CHECKOUT_SIGNING_SECRET: string };
  close(): Promise<void>;
}

/** Every payment as just created (nothing received: no handler runs), the default. */
export const createdPayment = (id: string): Payment => samplePayment({ id });
/** Every payment paid in full, 10.00 of 10.00 (what `paidDelivery` events carry). */
export const paidPayment = (id: string): Payment => samplePayment({ id, status: 'PAID', amount: '10.00', amountReceived: '10.00', remaining: '0' });

export async function startAnsweringService(answer: (id: string) => Payment = createdPayment): Promise<AnsweringService> {
  const standIn = await startStandIn({ apiKey: TEST_KEYS.apiKey, otherPayment: answer('pay_other'), answerUnknown: answer });
  return {
    url: standIn.url,
    env: { CHECKOUT_BASE_URL: standIn.url, CHECKOUT_API_KEY: TEST_KEYS.apiKey, CHECKOUT_SIGNING_SECRET: TEST_KEYS.signingSecret },
    close: () => standIn.close(),
  };
}
