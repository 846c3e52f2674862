/** mulberry32: a tiny seeded PRNG, so fault decisions replay identically for one seed. */
export function createRng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher–Yates with the given PRNG. */
export function shuffle<T>(items: T[], rng: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export interface FaultDecision {
  drop: boolean;
  duplicate: boolean;
  stale: boolean;
}

/**
 * The faults for one (event, URL) delivery. Three numbers are drawn every time, whatever the
 * probabilities, so one seed gives the same sequence of decisions across configurations.
 */
export function decideFaults(rng: () => number, p: { drop: number; duplicate: number; staleTimestamp: number }): FaultDecision {
  const [a, b, c] = [rng(), rng(), rng()];
  return { drop: a < p.drop, duplicate: b < p.duplicate, stale: c < p.staleTimestamp };
}
