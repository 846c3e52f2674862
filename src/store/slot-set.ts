/**
 * A set of small integers (event table slots) as a bitmap: one bit per slot instead of a Set entry
 * (~25 bytes) for each event waiting in a backlog, and it iterates in slot order, which is the
 * order the runs were made in. A second bitmap marks the words that hold a member, so a scan costs
 * what is in the set plus one word per 1,024 slots handed out: a run left waiting long ago does not
 * make every poll walk every slot since.
 */
export class SlotSet {
  private words = new Uint32Array(64);
  /** Bit `w` set when `words[w]` is not 0. */
  private summary = new Uint32Array(2);
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(slot: number): boolean {
    return ((this.words[slot >>> 5] ?? 0) & bit(slot)) !== 0;
  }

  add(slot: number): void {
    const word = slot >>> 5;
    if (word >= this.words.length) this.grow(word);
    const value = this.words[word] as number;
    if ((value & bit(slot)) !== 0) return;
    this.words[word] = value | bit(slot);
    this.summary[word >>> 5] = (this.summary[word >>> 5] as number) | bit(word);
    this.count += 1;
  }

  delete(slot: number): void {
    const word = slot >>> 5;
    const value = this.words[word] ?? 0;
    if ((value & bit(slot)) === 0) return;
    const next = value & ~bit(slot);
    this.words[word] = next;
    if (next === 0) this.summary[word >>> 5] = (this.summary[word >>> 5] as number) & ~bit(word);
    this.count -= 1;
  }

  /** Members, lowest first. */
  *ascending(): Generator<number> {
    for (let top = 0; top < this.summary.length; top++) {
      let words = this.summary[top] as number;
      for (let b = 0; words !== 0; b++, words >>>= 1) {
        if ((words & 1) === 0) continue;
        const word = top * 32 + b;
        let value = this.words[word] as number;
        for (let c = 0; value !== 0; c++, value >>>= 1) if ((value & 1) !== 0) yield word * 32 + c;
      }
    }
  }

  /** Members, highest first. */
  *descending(): Generator<number> {
    for (let top = this.summary.length - 1; top >= 0; top--) {
      const words = this.summary[top] as number;
      if (words === 0) continue;
      for (let b = 31; b >= 0; b--) {
        if ((words & bit(b)) === 0) continue;
        const word = top * 32 + b;
        const value = this.words[word] as number;
        for (let c = 31; c >= 0; c--) if ((value & bit(c)) !== 0) yield word * 32 + c;
      }
    }
  }

  private grow(word: number): void {
    const words = new Uint32Array(Math.max(this.words.length * 2, word + 1));
    words.set(this.words);
    this.words = words;
    const summary = new Uint32Array(Math.ceil(words.length / 32));
    summary.set(this.summary);
    this.summary = summary;
  }
}

const bit = (index: number): number => (1 << (index & 31)) >>> 0;
