import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readHandlerCalls, recordHandlerCalls } from '../../src/check/index.js';
import type { FulfillmentHandlers } from '../../src/fulfillment/index.js';
import { fulfillmentContext, samplePayment } from '../../src/testing/index.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';

afterEach(removeTempDirs);

describe('recordHandlerCalls', () => {
  it('appends each handler that returns (not one that throws), with the outcome and the handler that ran', async () => {
    const file = join(await tempDir('ck-record-'), 'nested', 'calls.jsonl');
    let fail = true;
    const handlers: FulfillmentHandlers = recordHandlerCalls(
      {
        async paid() {
          if (fail) throw new Error('database down');
        },
      },
      { file, environment: 'test' },
    );
    expect(Object.keys(handlers)).toEqual(['paid']); // no overpaid added: paid keeps standing in for it
    const payment = samplePayment({ referenceId: 'order-7', amountReceived: '30.00' });
    await expect(handlers.paid!(payment, fulfillmentContext(payment, { outcome: 'overpaid' }))).rejects.toThrow('database down');
    expect(await readHandlerCalls(file)).toBeUndefined();
    fail = false;
    await handlers.paid!(payment, fulfillmentContext(payment, { outcome: 'overpaid' }));
    expect(await readHandlerCalls(file)).toEqual([
      expect.objectContaining({
        kind: 'payment',
        id: payment.id,
        outcome: 'overpaid',
        handler: 'paid',
        referenceId: 'order-7',
        key: `payment:${payment.id}:overpaid`,
      }),
    ]);
  });

  it('records nothing with live keys, and still calls the handler', async () => {
    const file = join(await tempDir('ck-record-'), 'calls.jsonl');
    const payment = samplePayment();
    const calls: string[] = [];
    const live: FulfillmentHandlers = recordHandlerCalls(
      {
        async paid() {
          calls.push('live');
        },
      },
      { file, environment: 'live' },
    );
    await live.paid!(payment, fulfillmentContext(payment));
    expect(calls).toEqual(['live']);
    expect(await readHandlerCalls(file)).toBeUndefined();
  });
});
