import { createRequire } from 'node:module';

/** The part of fs-native-extensions used here: a kernel lock on an open file (OFD `fcntl` on Linux, `flock` on macOS, `LockFileEx` on Windows). */
export interface KernelLocks {
  /** Take an exclusive lock on `fd` without waiting: false when another open file holds it. */
  tryLock(fd: number): boolean;
  unlock(fd: number): void;
}

let loaded: KernelLocks | Error | undefined;

/**
 * The kernel's file locks, or why they cannot be had here (a platform without a prebuilt addon,
 * such as musl-based Alpine). Loaded on first use, so that a failure leaves the caller a choice.
 */
export function kernelLocks(): KernelLocks | Error {
  if (loaded) return loaded;
  try {
    loaded = createRequire(import.meta.url)('fs-native-extensions') as KernelLocks;
  } catch (error) {
    loaded = error instanceof Error ? error : new Error(String(error));
  }
  return loaded;
}
