import { describe, expect, it } from 'vitest';
import { NetworkError } from '../../../src/errors/index.js';
import { attachFulfillment, FulfillmentEngine } from '../../../src/fulfillment/index.js';
import { silentLogger } from '../../../src/log/index.js';
import { runKeys } from '../../../src/runs/index.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { createReceiver } from '../../../src/webhooks/index.js';
import { FakeReader } from '../../support/fake-reader.js';
import { samplePayment } from '../../support/fixtures.js';
import { tempDir } from '../../support/temp-dirs.js';
import { captureLogger, paymentEvent, SECRET, signedEvent, waitFor } from '../helpers.js';

describe('a dispatch after an outage', () => {
  it('keeps its attempts: one failure of its own after a long outage is retried, not given up at once', async () => {
    const dir = await tempDir('ck-outage-fault-');
    const store = new SqliteStore({ dir });
    await store.open();
    const logger = captureLogger();
    const receiver = createReceiver({ store, secrets: [SECRET], logger, maxAttempts: 3, backoffMs: 1, maxBackoffMs: 20, pollIntervalMs: 10 });
    const reader = new FakeReader();
    const state = { down: true, failedReads: 0 };
    const get = reader.payments.get;
    reader.payments.get = async (id: string) => {
      if (state.down) {
        state.failedReads += 1;
        throw new NetworkError('down');
      }
      return get(id);
    };
    let handlerCalls = 0;
    const engine = new FulfillmentEngine({
      store,
      client: reader,
      logger: silentLogger,
      maxAttempts: 1,
      handlers: {
        paid: async () => {
          handlerCalls += 1;
        },
      },
    });
    attachFulfillment(receiver, engine);
    const payment = reader.put(samplePayment({ amountReceived: '25.00', status: 'PAID' }));
    const event = { ...paymentEvent(), data: payment };
    // Make one non-outage failure once the service is back: a different handler throws once.
    let thrown = false;
    receiver.on(event.type, async () => {
      if (!state.down && !thrown) {
        thrown = true;
        throw new Error('db hiccup');
      }
    });
    await receiver.start();
    await receiver.handle(signedEvent(event));
    await waitFor(() => state.failedReads >= 9);
    state.down = false;
    await waitFor(async () => ['done', 'failed'].includes((await store.getRun(runKeys.event(event.id)))?.status ?? ''));
    const run = await store.getRun(runKeys.event(event.id));
    // The order is fulfilled once the service answers, and once only.
    if (run?.status === 'done') await waitFor(() => handlerCalls === 1);
    await receiver.stop();
    await store.close();
    expect(run?.status).toBe('done');
    expect(run?.outageAttempts).toBeGreaterThanOrEqual(3);
    expect(handlerCalls).toBe(1);
  });
});
