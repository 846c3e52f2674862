import { describe, expect, it } from 'vitest';
import { ReadCoalescer } from '../../src/fulfillment/read-coalescer.js';

/** A read that waits until `answer()` is called; counts how many began. */
function reads() {
  const began: string[] = [];
  const pending: Array<(value: string) => void> = [];
  return {
    began,
    read: (label: string) => () =>
      new Promise<string>((resolve) => {
        began.push(label);
        pending.push(resolve);
      }),
    answerAll: (value: string) => pending.splice(0).forEach((resolve) => resolve(value)),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const now = () => 0;

describe('ReadCoalescer and stopping', () => {
  it('callers share a queued read only with the same signal (or none): one path stopping never fails another', async () => {
    const coalescer = new ReadCoalescer<string>(100);
    const { began, read, answerAll } = reads();
    const first = coalescer.read('payment:1', now, read('first'));
    await tick(); // first is in flight
    const stopping = new AbortController();
    // Queued behind it: a dispatch (with the receiver's signal) and a buyer's return (none).
    const dispatch = coalescer.read('payment:1', now, read('dispatch'), stopping.signal);
    const sameStop = coalescer.read('payment:1', now, read('dispatch again'), stopping.signal);
    const buyer = coalescer.read('payment:1', now, read('buyer'));
    stopping.abort(new Error('the receiver is stopping'));
    // The dispatches give up at once, without waiting for the read in flight.
    await expect(dispatch).rejects.toThrow('the receiver is stopping');
    await expect(sameStop).rejects.toThrow('the receiver is stopping');
    answerAll('paid');
    expect((await first).value).toBe('paid');
    await tick();
    answerAll('paid');
    // The buyer's read was not theirs to abort: it ran, after the one in flight.
    expect((await buyer).value).toBe('paid');
    expect(began).toEqual(['first', 'buyer']);
  });

  it('a caller with the same signal joins the queued read', async () => {
    const coalescer = new ReadCoalescer<string>(100);
    const { began, read, answerAll } = reads();
    const signal = new AbortController().signal;
    const first = coalescer.read('payment:1', now, read('first'), signal);
    const second = coalescer.read('payment:1', now, read('second'), signal);
    expect(second).toBe(first);
    await tick();
    answerAll('paid');
    expect((await second).value).toBe('paid');
    expect(began).toEqual(['first']);
  });

  it('a signal already aborted gives up before reading', async () => {
    const coalescer = new ReadCoalescer<string>(100);
    const { began, read } = reads();
    const stopped = new AbortController();
    stopped.abort(new Error('stopped'));
    await expect(coalescer.read('payment:1', now, read('late'), stopped.signal)).rejects.toThrow('stopped');
    expect(began).toEqual([]);
  });
});
