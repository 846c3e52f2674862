import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TextArena } from '../../src/store/text-arena.js';

// Event ids and resource ids live here as UTF-8: every storable string must read back exactly and
// compare equal only to itself, across chunk boundaries and in a chunk of its own when large.

describe('TextArena', () => {
  it('reads every storable string back and compares it equal to itself only, across many chunks', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 40 }), { minLength: 1, maxLength: 200 }), (texts) => {
        const arena = new TextArena();
        // Fill most of a chunk first, so that the strings below cross into the next ones.
        arena.write('x'.repeat(256 * 1024 - 50));
        const kept = texts.map((text) => ({ text, ...arena.write(text) }));
        for (const { text, pos, len } of kept) {
          expect(arena.read(pos, len)).toBe(text);
          expect(arena.equals(pos, len, text)).toBe(true);
          expect(arena.equals(pos, len, `${text}a`)).toBe(false);
          if (text.length > 0) expect(arena.equals(pos, len, text.slice(1))).toBe(false);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('keeps a string larger than a chunk in a chunk of its own, and goes on after it', () => {
    const arena = new TextArena();
    const small = arena.write('before');
    const large = arena.write('é'.repeat(200_000)); // 400,000 bytes
    const after = arena.write('after');
    expect(arena.read(small.pos, small.len)).toBe('before');
    expect(arena.read(large.pos, large.len)).toBe('é'.repeat(200_000));
    expect(arena.read(after.pos, after.len)).toBe('after');
  });

  it('refuses strings that UTF-8 cannot carry (a lone surrogate), and takes pairs', () => {
    expect(TextArena.storable('evt_😀')).toBe(true);
    expect(TextArena.storable('evt_\ud83d')).toBe(false);
    expect(TextArena.storable('\ude00evt')).toBe(false);
    expect(TextArena.storable('\ude00\ud83d')).toBe(false);
  });

  it('regression: keeps the empty string, first of all and when the last chunk is exactly full (it once threw or read a chunk that did not exist)', () => {
    const first = new TextArena();
    const empty = first.write('');
    expect(first.read(empty.pos, empty.len)).toBe('');
    expect(first.equals(empty.pos, empty.len, '')).toBe(true);
    expect(first.equals(empty.pos, empty.len, 'a')).toBe(false);

    const full = new TextArena();
    const filler = full.write('r'.repeat(256 * 1024));
    const atEnd = full.write('');
    expect(full.read(atEnd.pos, atEnd.len)).toBe('');
    expect(full.matcher('')(atEnd.pos, atEnd.len)).toBe(true);
    expect(full.read(filler.pos, filler.len)).toHaveLength(256 * 1024);
  });
});
