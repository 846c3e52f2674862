/**
 * A set of small integers (event table slots) as a bitmap: one bit per slot instead of a Set entry
 * (~25 bytes) for each event waiting in a backlog, and it iterates in slot order, which is the
 * order the runs were made in. Iteration skips empty words and starts at the lowest word that may
 * hold a member.
 */
export class SlotSet {
  private words = new Uint32Array(64);
  private count = 0;
  /** No member lies in a word below this one. */
  private low = 0;
  /** No member lies in a word at or above this one. */
  private high = 0;

  get size(): number {
    return this.count;
  }

  has(slot: number): boolean {
    return ((this.words[slot >>> 5] ?? 0) & bit(slot)) !== 0;
  }

  add(slot: number): void {
    const word = slot >>> 5;
    if (word >= this.words.length) {
      const next = new Uint32Array(Math.max(this.words.length * 2, word + 1));
      next.set(this.words);
      this.words = next;
    }
    const value = this.words[word] as number;
    if ((value & bit(slot)) !== 0) return;
    this.words[word] = value | bit(slot);
    if (this.count === 0) {
      this.low = word;
      this.high = word + 1;
    } else {
      this.low = Math.min(this.low, word);
      this.high = Math.max(this.high, word + 1);
    }
    this.count += 1;
  }

  delete(slot: number): void {
    const word = slot >>> 5;
    const value = this.words[word] ?? 0;
    if ((value & bit(slot)) === 0) return;
    this.words[word] = value & ~bit(slot);
    this.count -= 1;
  }

  /** Members, lowest first. */
  *ascending(): Generator<number> {
    for (let word = this.low; word < this.high; word++) {
      let value = this.words[word] as number;
      if (value === 0) {
        // Nothing below this word any more: later scans start further on.
        if (word === this.low) this.low = word + 1;
        continue;
      }
      for (let b = 0; value !== 0; b++, value >>>= 1) if ((value & 1) !== 0) yield word * 32 + b;
    }
  }

  /** Members, highest first. */
  *descending(): Generator<number> {
    for (let word = this.high - 1; word >= this.low; word--) {
      const value = this.words[word] as number;
      if (value === 0) continue;
      for (let b = 31; b >= 0; b--) if ((value & bit(b)) !== 0) yield word * 32 + b;
    }
  }

  clear(): void {
    this.words = new Uint32Array(64);
    this.count = 0;
    this.low = 0;
    this.high = 0;
  }
}

const bit = (slot: number): number => (1 << (slot & 31)) >>> 0;
