/**
 * A token bucket on an injected clock: at most `burst` diagnoses at once, then `perMinute`. The
 * doctor's work is bounded per rejected delivery, and this bounds it per minute, so a flood of
 * forged deliveries costs no more than the verifier itself already does.
 */
export function tokenBucket(options: { burst: number; perMinute: number; now: () => number }): () => boolean {
  let tokens = options.burst;
  let last = options.now();
  return () => {
    const now = options.now();
    // A clock moved backwards refills nothing.
    tokens = Math.min(options.burst, tokens + (Math.max(0, now - last) * options.perMinute) / 60_000);
    last = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}
