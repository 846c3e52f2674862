import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  EVENT_RUN_PREFIX,
  HANDLER_OUTCOMES,
  parseRunKey,
  runKeys,
  type EventRunKey,
  type FulfillmentRunKey,
  type HandlerOutcome,
  type ParsedRunKey,
} from '../../src/runs/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { sampleEvent } from '../store/fixtures/sample-event.js';

describe('run keys', () => {
  it('keep the string format stored data already holds', () => {
    expect(runKeys.event('evt_1')).toBe('event:evt_1');
    expect(runKeys.fulfillment('payment', 'pay_1', 'paid')).toBe('payment:pay_1:paid');
    expect(runKeys.fulfillment('invoice', 'inv_9', 'underpaid')).toBe('invoice:inv_9:underpaid');
    expect(EVENT_RUN_PREFIX).toBe('event:');
  });

  it('are the keys the stores queue and list', async () => {
    const store = new MemoryStore();
    await store.insertEvent(sampleEvent('evt_7'));
    expect((await store.listRuns({ kind: 'event' })).map((run) => run.key)).toEqual([runKeys.event('evt_7')]);
  });

  it('parse back to what they name, ids with colons included', () => {
    expect(parseRunKey(runKeys.event('evt_1'))).toEqual({ kind: 'event', eventId: 'evt_1' });
    expect(parseRunKey(runKeys.event('a:b:paid'))).toEqual({ kind: 'event', eventId: 'a:b:paid' });
    expect(parseRunKey(runKeys.event(''))).toEqual({ kind: 'event', eventId: '' });
    for (const outcome of HANDLER_OUTCOMES) {
      expect(parseRunKey(runKeys.fulfillment('invoice', 'urn:inv:1', outcome))).toEqual({
        kind: 'fulfillment',
        resourceKind: 'invoice',
        resourceId: 'urn:inv:1',
        outcome,
      });
    }
  });

  it('do not parse keys the toolkit does not make', () => {
    for (const key of ['', 'job:a', 'r', 'payment:pay_1', 'payment:pay_1:pending', 'payment::paid', 'refund:r1:paid', ':x:paid', 'Event:evt_1']) {
      expect(parseRunKey(key), key).toBeUndefined();
    }
  });

  it('name every handler outcome once, in the order messages show them', () => {
    expect(HANDLER_OUTCOMES).toEqual(['paid', 'overpaid', 'underpaid', 'expired']);
  });

  it('are typed by what they name', () => {
    expectTypeOf(runKeys.event('e')).toEqualTypeOf<EventRunKey>();
    expectTypeOf(runKeys.fulfillment('payment', 'p', 'paid')).toEqualTypeOf<FulfillmentRunKey>();
    expectTypeOf<'event:evt_1'>().toExtend<EventRunKey>();
    expectTypeOf<'payment:pay_1:paid'>().toExtend<FulfillmentRunKey>();
    expectTypeOf<'payment:pay_1:pending'>().not.toExtend<FulfillmentRunKey>();
    expectTypeOf<(typeof HANDLER_OUTCOMES)[number]>().toEqualTypeOf<HandlerOutcome>();
    expectTypeOf<HandlerOutcome>().toEqualTypeOf<'paid' | 'overpaid' | 'underpaid' | 'expired'>();

    const parsed = parseRunKey('payment:pay_1:paid');
    expectTypeOf(parsed).toEqualTypeOf<ParsedRunKey | undefined>();
    if (parsed?.kind === 'fulfillment') {
      expectTypeOf(parsed.outcome).toEqualTypeOf<HandlerOutcome>();
      expectTypeOf(parsed.resourceKind).toEqualTypeOf<'payment' | 'invoice'>();
      // @ts-expect-error a fulfillment key names no event
      void parsed.eventId;
    }
    if (parsed?.kind === 'event') {
      expectTypeOf(parsed.eventId).toEqualTypeOf<string>();
      // @ts-expect-error an event key names no outcome
      void parsed.outcome;
    }

    // @ts-expect-error `pending` has no handler, so no run
    runKeys.fulfillment('payment', 'pay_1', 'pending');
    // @ts-expect-error only payments and invoices have runs
    runKeys.fulfillment('refund', 'r_1', 'paid');
    // @ts-expect-error an event run is keyed by the event id alone
    runKeys.event('evt_1', 'paid');
  });
});
