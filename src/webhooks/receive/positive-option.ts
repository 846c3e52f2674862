import { ConfigError } from '../../errors/index.js';

/** A numeric option checked up front, so a bad value fails at start-up, not mid-delivery. */
export function positive(name: string, value: number, minimum = 1): number {
  if (!Number.isFinite(value) || value < minimum) throw new ConfigError(`Receiver option ${name} must be a number ≥ ${minimum}, got ${value}.`);
  return value;
}
