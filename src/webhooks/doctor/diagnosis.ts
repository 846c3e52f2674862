import type { DamageKind } from './damages.js';
import type { Framework } from './frameworks.js';

/**
 * The doctor's verdict on one rejected delivery. It explains a rejection; it never turns one into
 * an acceptance.
 */
export interface Diagnosis {
  /** The damage found, or `unknown` when no known damage explains the rejection (e.g. a forgery). */
  cause: DamageKind | 'unknown';
  /**
   * True when undoing the damage made the signature verify with a configured secret (proof);
   * false for a likely cause read from signs in the delivery (no proof).
   */
  certain: boolean;
  /** One or two sentences: what happened to the bytes (or the secret, or the clock). */
  summary: string;
  /** What to change, for the framework in use when it could be told. */
  fix: string;
  /** The framework (or proxy) the fix is written for. */
  framework: Framework;
}

/** A diagnosis as one log or dead-letter line. */
export function describeDiagnosis(diagnosis: Diagnosis): string {
  return `Likely cause: ${diagnosis.summary} Fix: ${diagnosis.fix}`;
}
