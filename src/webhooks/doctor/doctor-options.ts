import { ConfigError } from '../../errors/index.js';
import type { Environment } from '../../schemas/common.js';
import type { Framework } from './frameworks.js';

/**
 * The raw-body doctor: when a delivery fails verification it tries the usual damage on the bytes
 * (and the secret, and the clock) to explain why. It never accepts what failed.
 * @example createReceiver({ store, secrets, doctor: { framework: 'express' } })
 */
export interface DoctorOptions {
  /**
   * Development mode: the 401 answer's message carries the diagnosis too (the log and
   * `checkout-kit events dead-letters` always do). Never on with `NODE_ENV=production`.
   * @default true when NODE_ENV is not `production` and either the receiver's `environment` is
   * `test` (test-mode keys) or NODE_ENV is `development` or `test`; otherwise false
   */
  development?: boolean;
  /** Diagnoses right away before the rate applies. @default 5 */
  burst?: number;
  /** Diagnoses per minute after the burst; rejections beyond it are refused without one. @default 6 */
  perMinute?: number;
  /** The framework the receiver runs in, for the advice. @default guessed from request headers */
  framework?: Framework;
  /** Keep each diagnosed rejection as a dead letter (its body cut to 2 KiB). @default true */
  deadLetters?: boolean;
}

export interface NormalizedDoctorOptions {
  development: boolean;
  burst: number;
  perMinute: number;
  framework: Framework | undefined;
  deadLetters: boolean;
}

function atLeast(name: string, value: number, minimum: number): number {
  if (!Number.isFinite(value) || value < minimum) throw new ConfigError(`Receiver option doctor.${name} must be a number ≥ ${minimum}, got ${value}.`);
  return value;
}

/** Defaults applied up front; `false` turns the doctor off. */
export function normalizeDoctorOptions(
  options: DoctorOptions | false | undefined,
  environment: Environment | undefined,
  nodeEnv: string | undefined = process.env.NODE_ENV,
): NormalizedDoctorOptions | false {
  if (options === false) return false;
  const production = nodeEnv === 'production';
  const developmentByDefault = !production && (environment === 'test' || nodeEnv === 'development' || nodeEnv === 'test');
  return {
    development: !production && (options?.development ?? developmentByDefault),
    burst: atLeast('burst', options?.burst ?? 5, 1),
    perMinute: atLeast('perMinute', options?.perMinute ?? 6, 0),
    framework: options?.framework,
    deadLetters: options?.deadLetters ?? true,
  };
}
