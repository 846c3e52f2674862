import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SlotSet } from '../../src/store/slot-set.js';

// The event table's index of runs still to do: members in slot order both ways, as a sorted Set.

describe('SlotSet', () => {
  it('holds what a Set holds and lists it in order, ascending and descending, through adds, deletes and scans', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('add', 'delete', 'scan'), fc.integer({ min: 0, max: 5000 })), { maxLength: 400 }), (steps) => {
        const set = new SlotSet();
        const model = new Set<number>();
        for (const [step, slot] of steps) {
          if (step === 'add') {
            set.add(slot);
            model.add(slot);
          } else if (step === 'delete') {
            set.delete(slot);
            model.delete(slot);
          } else {
            // A scan moves the set's lower bound: later adds below it must still be found.
            expect([...set.ascending()]).toEqual([...model].sort((a, b) => a - b));
          }
          expect(set.size).toBe(model.size);
          expect(set.has(slot)).toBe(model.has(slot));
        }
        const sorted = [...model].sort((a, b) => a - b);
        expect([...set.ascending()]).toEqual(sorted);
        expect([...set.descending()]).toEqual(sorted.reverse());
      }),
      { numRuns: 300 },
    );
  });

  it('keeps bit 31 of a word (its sign bit) like any other', () => {
    const set = new SlotSet();
    for (const slot of [31, 63, 32, 0]) set.add(slot);
    expect([...set.ascending()]).toEqual([0, 31, 32, 63]);
    expect([...set.descending()]).toEqual([63, 32, 31, 0]);
  });
});
