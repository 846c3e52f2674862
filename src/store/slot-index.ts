/**
 * A hash index from a key (an event id) to a slot, for keys kept elsewhere (`EventTable` keeps them
 * in a `TextArena`): open addressing with linear probing in one `Int32Array`, two entries per slot
 * at most, instead of a `Map` entry and the key's string per event. The caller gives each slot's
 * hash and tells whether a slot holds a key; deletion shifts the probe chain back (no tombstones).
 */
export class SlotIndex {
  /** slot + 1 per entry; 0 is empty. */
  private entries = new Int32Array(1024);
  private count = 0;

  constructor(
    private readonly hashOf: (slot: number) => number,
    private readonly holds: (slot: number, key: string) => boolean,
  ) {}

  get size(): number {
    return this.count;
  }

  /** The slot holding `key`, whose hash is `hash`. */
  find(key: string, hash: number): number | undefined {
    const mask = this.entries.length - 1;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const entry = this.entries[i] as number;
      if (entry === 0) return undefined;
      const slot = entry - 1;
      if (this.hashOf(slot) === hash && this.holds(slot, key)) return slot;
    }
  }

  /** Index `slot` (its key not indexed yet) under `hash`. */
  add(slot: number, hash: number): void {
    if ((this.count + 1) * 2 > this.entries.length) this.resize(this.entries.length * 2);
    this.place(slot, hash);
    this.count += 1;
  }

  /** Take `slot`, indexed under `hash`, out. */
  remove(slot: number, hash: number): void {
    const entries = this.entries;
    const mask = entries.length - 1;
    let i = hash & mask;
    while (entries[i] !== slot + 1) {
      if (entries[i] === 0) return;
      i = (i + 1) & mask;
    }
    // Shift later entries of the chain back into the gap when their home is not between the gap and them.
    for (let j = (i + 1) & mask; entries[j] !== 0; j = (j + 1) & mask) {
      const home = this.hashOf((entries[j] as number) - 1) & mask;
      const between = i <= j ? i < home && home <= j : i < home || home <= j;
      if (between) continue;
      entries[i] = entries[j] as number;
      i = j;
    }
    entries[i] = 0;
    this.count -= 1;
  }

  private place(slot: number, hash: number): void {
    const mask = this.entries.length - 1;
    let i = hash & mask;
    while (this.entries[i] !== 0) i = (i + 1) & mask;
    this.entries[i] = slot + 1;
  }

  private resize(size: number): void {
    const old = this.entries;
    this.entries = new Int32Array(size);
    for (const entry of old) if (entry !== 0) this.place(entry - 1, this.hashOf(entry - 1));
  }
}

/** A per-process seed: how ids hash cannot be chosen from outside to collide. */
const SEED = (Math.random() * 2 ** 32) | 0;

/** FNV-1a over the UTF-16 code units, seeded, with a final mix so that low bits spread. */
export function hashText(text: string): number {
  let h = (0x811c9dc5 ^ SEED) | 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h | 0;
}
