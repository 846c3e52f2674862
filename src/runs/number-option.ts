import { ConfigError } from '../errors/index.js';

/**
 * A numeric option checked up front, so that a bad value fails at start-up, not mid-work.
 * `subject` names whose option it is in the message (`Engine`, `Reconcile`).
 */
export function numberOption(subject: string, name: string, value: number, minimum = 1): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < minimum) {
    throw new ConfigError(`${subject} option ${name} must be a number ≥ ${minimum}, got ${String(value)}: fix the value or leave it out for the default.`);
  }
  return value;
}
