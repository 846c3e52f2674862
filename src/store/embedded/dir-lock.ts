import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { StoreError } from '../../errors/index.js';

export interface DirLockOptions {
  /** A lock not refreshed for this long belongs to a dead process and is taken over. */
  staleMs: number;
  /** Skip locking entirely (tests proving what the lock protects). */
  disabled: boolean;
  onCompromised(error: Error): void;
}

export const LOCK_NAME = 'store.lock';

/** How long a writer waits for another process's lock before reporting it stuck. */
const ACQUIRE_TIMEOUT_MS = 60_000;
/** Longest pause between two tries for a held lock. */
const MAX_POLL_MS = 50;

/**
 * The cross-process lock of a store folder (proper-lockfile: an atomic `mkdir` of `store.lock`,
 * kept fresh by a timer so that a crashed holder's lock goes stale). Every read of another
 * process's writes and every append happens while holding it.
 */
export class DirLock {
  private compromised: Error | undefined;

  constructor(
    private readonly dir: string,
    private readonly options: DirLockOptions,
  ) {}

  /** Whether the lock held now was taken over (this process stalled past the stale time). */
  get lost(): boolean {
    return this.compromised !== undefined;
  }

  /** Run `fn` holding the lock. */
  async with<T>(fn: () => Promise<T>): Promise<T> {
    if (this.options.disabled) return fn();
    const release = await this.acquire();
    try {
      const result = await fn();
      // A holder that lost its lock (stalled past `staleMs`) must not report success.
      if (this.compromised) throw new StoreError(`Lost the lock on ${this.dir} while writing: ${this.compromised.message}. Retry the operation.`);
      return result;
    } finally {
      await release().catch(() => undefined);
    }
  }

  private async acquire(): Promise<() => Promise<void>> {
    this.compromised = undefined;
    // Holders keep it for one group commit (about a millisecond), or a compaction (up to seconds
    // at 100,000 events): poll fast, back off to 50 ms, give up after about a minute. The retry
    // loop is ours: proper-lockfile's `retries` builds its whole schedule (1,500 timeouts) on every
    // call, which cost ~7% of serve's main thread under load.
    const deadline = performance.now() + ACQUIRE_TIMEOUT_MS;
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await lockfile.lock(this.dir, {
          lockfilePath: join(this.dir, LOCK_NAME),
          realpath: false,
          stale: this.options.staleMs,
          retries: 0,
          onCompromised: (error) => {
            this.compromised = error;
            this.options.onCompromised(error);
          },
        });
      } catch (error) {
        const held = (error as NodeJS.ErrnoException).code === 'ELOCKED';
        if (held && performance.now() < deadline) {
          const wait = Math.min(MAX_POLL_MS, 1.5 ** attempt) * (0.5 + Math.random());
          await new Promise((resolve) => setTimeout(resolve, wait));
          continue;
        }
        throw new StoreError(
          held
            ? `Cannot lock the store ${this.dir}: another process has held ${LOCK_NAME} for over a minute. ` +
                `Look for a stuck checkout-kit process (a dead one's lock is taken over after ${this.options.staleMs} ms).`
            : `Cannot lock the store ${this.dir}: ${(error as Error).message}. Check that the folder is writable.`,
          { cause: error },
        );
      }
    }
  }
}
