/**
 * What each confirmation did, by nonce: a confirmation submitted twice (a double click, a reload,
 * the back button, two tabs at once) gets the first one's result and does nothing again. Bounded:
 * the oldest nonces are forgotten first.
 */
export class OnceOnly<T> {
  private readonly done = new Map<string, Promise<T>>();

  constructor(private readonly capacity = 1000) {}

  /** Run `work` for `nonce` unless it ran (or runs) already; `repeated` says which. A failed run may be tried again. */
  async run(nonce: string, work: () => Promise<T>): Promise<{ result: T; repeated: boolean }> {
    const earlier = this.done.get(nonce);
    if (earlier) return { result: await earlier, repeated: true };
    const promise = work();
    this.done.set(nonce, promise);
    while (this.done.size > this.capacity) this.done.delete(this.done.keys().next().value as string);
    try {
      return { result: await promise, repeated: false };
    } catch (error) {
      this.done.delete(nonce);
      throw error;
    }
  }
}
