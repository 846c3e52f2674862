import { describe, expect, expectTypeOf, it } from 'vitest';
import { CHECKOUT_ERROR_STATUS, CheckoutError, CheckoutKitError, type CheckoutErrorCode } from '../../src/errors/index.js';

describe('CheckoutError', () => {
  it('takes its status from its code, one table for every code', () => {
    const codes = Object.keys(CHECKOUT_ERROR_STATUS) as CheckoutErrorCode[];
    expect(codes.length).toBe(9);
    for (const code of codes) {
      const error = new CheckoutError(`failed with ${code}`, { code });
      expect(error).toMatchObject({ name: 'CheckoutError', code, status: CHECKOUT_ERROR_STATUS[code], message: `failed with ${code}` });
      expect(error).toBeInstanceOf(CheckoutKitError);
    }
    expect(new CheckoutError('gone', { code: 'not_found' }).status).toBe(404);
    expect(new CheckoutError('slow', { code: 'service_unreachable' }).status).toBe(503);
  });

  it('keeps the cause it is given, and has none otherwise', () => {
    const cause = new Error('socket hang up');
    expect(new CheckoutError('down', { code: 'service_unreachable', cause }).cause).toBe(cause);
    expect(Object.hasOwn(new CheckoutError('no order id', { code: 'invalid_request' }), 'cause')).toBe(false);
  });

  it('is typed: the code is a CheckoutErrorCode, the status one of the table', () => {
    const error = new CheckoutError('x', { code: 'token_not_available' });
    expectTypeOf(error.code).toEqualTypeOf<CheckoutErrorCode>();
    expectTypeOf(error.status).toEqualTypeOf<400 | 404 | 409 | 422 | 502 | 503>();
    expectTypeOf<'idempotency_key_reused'>().toExtend<CheckoutErrorCode>();
    expectTypeOf<'payment_failed'>().not.toExtend<CheckoutErrorCode>();
    expectTypeOf<CheckoutErrorCode>().not.toEqualTypeOf<string>();
    // @ts-expect-error: an unknown code is a compile error
    expect(() => new CheckoutError('x', { code: 'payment_failed' })).not.toThrow();
    // @ts-expect-error: the status follows from the code, it is not given
    expect(new CheckoutError('x', { code: 'not_found', status: 500 }).status).toBe(404);
  });
});
