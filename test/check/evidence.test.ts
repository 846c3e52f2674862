import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendHandlerCall } from '../../src/check/handler-calls.js';
import { chooseEvidence } from '../../src/check/evidence.js';
import { MemoryStore } from '../../src/store/index.js';
import { tempDir } from '../support/temp-dirs.js';

const stores: MemoryStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

describe('chooseEvidence', () => {
  it('reads the calls from the handler-call record and, from the store, why a handler that never returned did not: it threw', async () => {
    const store = new MemoryStore();
    await store.open();
    stores.push(store);
    const at = new Date('2031-01-01T00:00:00.000Z');
    for (const id of ['pay-ok', 'pay-throws']) {
      const key = `payment:${id}:paid`;
      await store.enqueueRun({ key, kind: 'fulfillment', data: {} }, at);
      await store.claimRun(key, { owner: 'w', leaseMs: 60_000, now: at });
      if (id === 'pay-ok') await store.completeRun(key, 'w', at);
      else await store.failRun(key, 'w', { error: 'warehouse down', retryAt: undefined, now: at });
    }
    const recordFile = join(await tempDir('ck-evidence-'), 'calls.jsonl');
    await appendHandlerCall(recordFile, { at: at.toISOString(), kind: 'payment', id: 'pay-ok', outcome: 'paid' });

    const evidence = chooseEvidence({ recordFile, store: { store, description: 'memory' } });
    expect(evidence.kind).toBe('record');
    const observed = await evidence.read(['pay-ok', 'pay-throws']);
    expect(observed.get('pay-ok')).toMatchObject({ calls: { paid: [{}] }, notes: [] });
    expect(observed.get('pay-throws')).toMatchObject({ calls: { paid: [] }, notes: ['its paid handler failed for good: warehouse down'] });
  });
});
