import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classify, type Classifiable } from '../../src/fulfillment/index.js';
import { compareAmounts } from '../../src/money/index.js';
import { OUTCOME_RANK } from '../../src/store/index.js';
import { decimalString } from '../support/arbitraries.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const FUTURE = '2026-11-22T13:00:00Z';
const PAST = '2026-11-22T11:00:00Z';

const resource = (amountReceived: string, expiresAt = FUTURE, extra: Partial<Classifiable> = {}): Classifiable => ({
  status: 'WHATEVER',
  amount: '100.00',
  amountReceived,
  expiresAt,
  ...extra,
});

describe('classify', () => {
  it.each([
    ['100', FUTURE, 'paid'],
    ['100.000000000000000000', FUTURE, 'paid'],
    ['100.01', FUTURE, 'overpaid'],
    ['99.99', FUTURE, 'pending'],
    ['0', FUTURE, 'pending'],
    ['0', PAST, 'expired'],
    ['0.000000000000000001', PAST, 'underpaid'],
    ['99.99', PAST, 'underpaid'],
    ['100', PAST, 'paid'],
    ['250', PAST, 'overpaid'],
  ])('received %s, expires %s → %s', (received, expiresAt, outcome) => {
    expect(classify(resource(received, expiresAt), { now: NOW }).outcome).toBe(outcome);
  });

  it('does not trust status words to pay: a PAID status with nothing received is pending', () => {
    expect(classify(resource('0', FUTURE, { status: 'PAID' }), { now: NOW }).outcome).toBe('pending');
  });

  it('underpay tolerance: absolute and percent, the larger wins', () => {
    expect(classify(resource('99.99'), { now: NOW, underpayTolerance: { absolute: '0.01' } }).outcome).toBe('paid');
    expect(classify(resource('99.98'), { now: NOW, underpayTolerance: { absolute: '0.01' } }).outcome).toBe('pending');
    expect(classify(resource('99.50'), { now: NOW, underpayTolerance: { percent: '0.5' } }).outcome).toBe('paid');
    expect(classify(resource('99.49'), { now: NOW, underpayTolerance: { percent: '0.5', absolute: '0.1' } }).outcome).toBe('pending');
  });

  it('a tolerance as large as the amount never pays for nothing', () => {
    expect(classify(resource('0', FUTURE, { amount: '0.01' }), { now: NOW, underpayTolerance: { absolute: '0.01' } }).outcome).toBe('pending');
    expect(classify(resource('0', PAST), { now: NOW, underpayTolerance: { percent: '100' } }).outcome).toBe('expired');
    expect(classify(resource('0.000001', PAST), { now: NOW, underpayTolerance: { percent: '100' } }).outcome).toBe('paid');
  });

  it('status map refines: closed ends a resource early, hold defers paid', () => {
    expect(classify(resource('0', FUTURE, { status: 'EXPIRED' }), { now: NOW }).outcome).toBe('expired');
    expect(classify(resource('5', FUTURE, { status: 'EXPIRED' }), { now: NOW }).outcome).toBe('underpaid');
    expect(classify(resource('100', FUTURE, { status: 'CONFIRMING' }), { now: NOW, statusMap: { CONFIRMING: 'hold' } }).outcome).toBe('pending');
    expect(classify(resource('0', FUTURE, { status: 'EXPIRED' }), { now: NOW, statusMap: {} }).outcome).toBe('pending');
  });

  it('flags late money: paid with the last change after expiresAt', () => {
    expect(classify(resource('100', PAST, { updatedAt: '2026-11-22T11:30:00Z' }), { now: NOW }).late).toBe(true);
    expect(classify(resource('100', PAST, { updatedAt: '2026-11-22T10:30:00Z' }), { now: NOW }).late).toBe(false);
    expect(classify(resource('0', PAST, { updatedAt: '2026-11-22T11:30:00Z' }), { now: NOW }).late).toBe(false);
  });

  it('gives amountReceived as the service wrote it, as amount is', () => {
    expect(classify(resource('10.00', FUTURE, { amount: '10.00' }), { now: NOW })).toMatchObject({ outcome: 'paid', amount: '10.00', amountReceived: '10.00' });
  });

  it('sums an invoice detail’s payments when amountReceived is absent', () => {
    const invoice = { status: 'X', amount: '40', expiresAt: FUTURE, payments: [{ amount: '15.5' }, { amountReceived: '24.5' }] };
    expect(classify(invoice, { now: NOW })).toMatchObject({ outcome: 'paid', amountReceived: '40.0' });
  });

  it('writes shortfall, surplus and a summed amount received with the decimals of the figures they come from', () => {
    expect(classify(resource('8.00', FUTURE, { amount: '7.00' }), { now: NOW })).toMatchObject({ surplus: '1.00', shortfall: '0' });
    expect(classify(resource('6.5', PAST, { amount: '7.00' }), { now: NOW })).toMatchObject({ shortfall: '0.50', surplus: '0' });
    const invoice = { ...resource('0', PAST, { amount: '10.00' }), amountReceived: undefined, payments: [{ amountReceived: '4.00' }, { amount: '2.00' }] };
    expect(classify(invoice, { now: NOW })).toMatchObject({ outcome: 'underpaid', amountReceived: '6.00', shortfall: '4.00' });
  });

  it('reports shortfall and surplus exactly', () => {
    expect(classify(resource('0.3', FUTURE, { amount: '0.1' }), { now: NOW })).toMatchObject({ outcome: 'overpaid', surplus: '0.2', shortfall: '0' });
    expect(classify(resource('0.1', PAST, { amount: '0.3' }), { now: NOW })).toMatchObject({ outcome: 'underpaid', shortfall: '0.2' });
  });

  const decimal = decimalString({ maxUnits: 10n ** 24n });

  it('is monotonic in amountReceived (property)', () => {
    fc.assert(
      fc.property(decimal, decimal, decimal, fc.boolean(), (amount, a, b, expired) => {
        const [low, high] = compareAmounts(a, b) <= 0 ? [a, b] : [b, a];
        const when = expired ? PAST : FUTURE;
        const first = classify({ amount, amountReceived: low, expiresAt: when }, { now: NOW }).outcome;
        const second = classify({ amount, amountReceived: high, expiresAt: when }, { now: NOW }).outcome;
        expect(OUTCOME_RANK[second]).toBeGreaterThanOrEqual(OUTCOME_RANK[first]);
      }),
    );
  });

  it('has no float path: amounts beyond double precision compare exactly (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 10n ** 17n, max: 10n ** 30n }), (units) => {
        const amount = `${units}.000000000000000001`;
        const oneWeiShort = `${units}`;
        expect(classify({ amount, amountReceived: oneWeiShort, expiresAt: PAST }, { now: NOW }).outcome).toBe('underpaid');
        expect(classify({ amount, amountReceived: amount, expiresAt: PAST }, { now: NOW }).outcome).toBe('paid');
      }),
    );
  });
});
