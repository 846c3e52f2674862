import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors/index.js';
import { runKeys } from '../../src/runs/index.js';
import type { CheckoutEvent } from '../../src/schemas/index.js';
import { openStore } from '../../src/store/open.js';
import { WebhookHandlerError } from '../../src/webhooks/index.js';
import { execCli } from '../support/cli.js';
import { samplePayment } from '../support/fixtures.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';

afterEach(async () => {
  await removeTempDirs();
});

/**
 * A store with two runs failed for good: the dispatch of an event whose payment the service did
 * not know (the error the receiver stores), and a fulfillment handler with a short error.
 */
async function seed(cwd: string) {
  const payment = samplePayment();
  const event: CheckoutEvent = { id: 'evt_1', type: 'payment.paid', createdAt: new Date().toISOString(), environment: 'test', data: payment };
  const notFound = new ApiError({
    status: 404,
    code: 'not_found',
    message: 'no such payment',
    operation: 'payments.get',
    method: 'GET',
    url: `http://127.0.0.1:4010/v1/payments/${payment.id}`,
  });
  const dispatchError = new WebhookHandlerError(event, [notFound], 5, 5, undefined).message;
  const store = await openStore('file:.checkout-kit', { cwd });
  const now = new Date().toISOString();
  await store.insertEvent({
    id: event.id,
    type: event.type,
    environment: 'test',
    createdAt: now,
    receivedAt: now,
    resourceKind: 'payment',
    resourceId: payment.id,
    body: JSON.stringify(event),
  });
  await store.claimRun(runKeys.event(event.id), { owner: 'me', leaseMs: 60_000 });
  await store.failRun(runKeys.event(event.id), 'me', { error: dispatchError });
  const fulfillment = runKeys.fulfillment('payment', payment.id, 'paid');
  await store.enqueueRun({ key: fulfillment, kind: 'fulfillment', data: {} });
  await store.claimRun(fulfillment, { owner: 'me', leaseMs: 60_000 });
  await store.failRun(fulfillment, 'me', { error: 'no stock' });
  await store.close();
  return { dispatchError, fulfillment };
}

/** The cells of the `error` column of a table the CLI printed, by the first cell of each row. */
function errorCells(table: string): Record<string, string> {
  const [header = '', , ...rows] = table.trimEnd().split('\n');
  const at = header.indexOf('error');
  return Object.fromEntries(rows.map((row) => [row.split(/\s+/)[0]!, row.slice(at)]));
}

describe('the error column of runs and events list', () => {
  it('shows the cause of a failed dispatch (status and code first) and marks the cut with …; a short error whole', async () => {
    const cwd = await tempDir('ck-error-column-');
    const { dispatchError, fulfillment } = await seed(cwd);
    expect(dispatchError.length).toBeGreaterThan(60);
    const cut = 'payments.get failed: 404 not_found: no such payment (GET ht…';
    expect(cut).toHaveLength(60);

    const runs = await execCli(['runs', '--failed'], { cwd });
    expect(runs.code).toBe(0);
    expect(errorCells(runs.stdout)).toEqual({ [runKeys.event('evt_1')]: cut, [fulfillment]: 'no stock' });

    const events = await execCli(['events', 'list'], { cwd });
    expect(events.code).toBe(0);
    expect(errorCells(events.stdout)).toEqual({ evt_1: cut });
  });
});
