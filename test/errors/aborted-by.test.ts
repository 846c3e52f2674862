import { describe, expect, it } from 'vitest';
import { isAbortedBy } from '../../src/errors/index.js';

describe('isAbortedBy', () => {
  it("the signal's reason, or an AbortError, once the signal has aborted; nothing else, and nothing before", () => {
    const controller = new AbortController();
    const reason = new Error('the receiver is stopping');
    const cutShort = Object.assign(new Error('The operation was aborted'), { name: 'AbortError' });
    expect(isAbortedBy(reason, controller.signal)).toBe(false);
    expect(isAbortedBy(cutShort, controller.signal)).toBe(false);
    controller.abort(reason);
    expect(isAbortedBy(reason, controller.signal)).toBe(true);
    expect(isAbortedBy(cutShort, controller.signal)).toBe(true);
    expect(isAbortedBy(new Error('ERP down'), controller.signal)).toBe(false);
    expect(isAbortedBy(reason, undefined)).toBe(false);
  });
});
