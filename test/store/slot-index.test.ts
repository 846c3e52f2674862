import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashText, SlotIndex } from '../../src/store/slot-index.js';

// The event table finds an event's slot by its id through this index: it must answer exactly as a
// Map would through any mix of adds and removes, with colliding hashes and chains wrapping around.

/** An index over `keys` (slot → key), with `hash` for each key. */
function indexOver(keys: Map<number, string>, hash: (key: string) => number) {
  return new SlotIndex(
    (slot) => hash(keys.get(slot) as string),
    (slot, key) => keys.get(slot) === key,
  );
}

describe('SlotIndex', () => {
  it('answers as a Map through random adds and removes, with good and with badly colliding hashes', () => {
    const weak = (key: string) => key.length % 3; // three buckets: long chains, wrap-around, shifts on removal
    for (const hash of [hashText, weak]) {
      fc.assert(
        fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 300 })), { maxLength: 600 }), (steps) => {
          const keys = new Map<number, string>();
          const model = new Map<string, number>();
          const index = indexOver(keys, hash);
          let nextSlot = 0;
          for (const [add, n] of steps) {
            const key = `k${'x'.repeat(n % 7)}${n}`;
            if (add && !model.has(key)) {
              const slot = nextSlot++;
              keys.set(slot, key);
              model.set(key, slot);
              index.add(slot, hash(key));
            } else if (!add && model.has(key)) {
              const slot = model.get(key) as number;
              index.remove(slot, hash(key));
              model.delete(key);
            }
            expect(index.size).toBe(model.size);
          }
          for (let n = 0; n <= 300; n++) {
            const key = `k${'x'.repeat(n % 7)}${n}`;
            expect(index.find(key, hash(key))).toBe(model.get(key));
          }
        }),
        { numRuns: 200 },
      );
    }
  });

  it('grows past its first size and keeps finding every key', () => {
    const keys = new Map<number, string>();
    const index = indexOver(keys, hashText);
    for (let slot = 0; slot < 50_000; slot++) {
      keys.set(slot, `evt_${slot}`);
      index.add(slot, hashText(`evt_${slot}`));
    }
    for (let slot = 0; slot < 50_000; slot += 997) expect(index.find(`evt_${slot}`, hashText(`evt_${slot}`))).toBe(slot);
    expect(index.find('evt_50000', hashText('evt_50000'))).toBeUndefined();
  });

  it('hashes by every code unit: ids that differ in one character, or only in order, hash apart', () => {
    expect(hashText('evt_1')).not.toBe(hashText('evt_2'));
    expect(hashText('ab')).not.toBe(hashText('ba'));
    expect(hashText('é')).not.toBe(hashText('e'));
  });
});
