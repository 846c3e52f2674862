import { describe, expect, it } from 'vitest';
import * as properties from '../../faults/support/hostile-properties.js';

// The hostile-input properties of the fault suite at `npm test` size: about 1,000 cases each.
// The faults run (test/faults/hostile-input.test.ts) runs the same checks with 100,000 cases each.

const RUNS = 1_000;

describe('hostile input to the library functions behind serve (1,000 cases each)', () => {
  it('verifier: random and near-valid deliveries throw only WebhookVerificationError, never verify without the genuine HMAC', () => {
    const stats = properties.checkVerifierOnGarbage(RUNS);
    expect(stats.runs).toBe(RUNS);
    expect(stats.verified).toBeGreaterThan(0);
  });

  it('verifier: a flipped byte of a signed body, id, timestamp or signature is refused (every scheme)', () => {
    expect(properties.checkTamperedRefused(RUNS).runs).toBe(RUNS);
  });

  it('envelope parser: never throws, keeps unknown fields, never pollutes a prototype', () => {
    const stats = properties.checkEnvelopeParser(RUNS);
    expect(stats.ok).toBeGreaterThan(0);
  });

  it('amount parser: MoneyError or an answer, never a crash; arithmetic exact up to 60 integer digits', () => {
    expect(properties.checkAmountParser(RUNS).runs).toBe(RUNS);
    expect(properties.checkAmountArithmetic(RUNS, 60).arithmetic).toBe(RUNS);
  });

  it('redirect guard: no URL off the allow-list passes; plain URLs on it do', () => {
    expect(properties.checkRedirectGuard(RUNS).allowed).toBeGreaterThan(0);
    expect(properties.checkRedirectAcceptsPlain(200)).toBe(200);
  });
});
