import nock from 'nock';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';

/** Call at the top of a test file: no real network, and every interceptor a test sets up must be used by its end. */
export function strictNock(): void {
  beforeAll(() => nock.disableNetConnect());
  afterEach(() => {
    expect(nock.pendingMocks()).toEqual([]);
    nock.cleanAll();
  });
  afterAll(() => nock.enableNetConnect());
}
