import { CheckoutKitError, ConfigError, InvalidRequestError } from '../errors/index.js';

/** Exit codes of contract.md section 4. */
export const EXIT = { ok: 0, failures: 1, usage: 2 } as const;

/** A usage problem found by a command (bad flag value, missing argument): exit 2. */
export class UsageError extends CheckoutKitError {
  override name = 'UsageError';
}

/** Exit code for an error that escaped a command. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof UsageError || error instanceof ConfigError || error instanceof InvalidRequestError) return EXIT.usage;
  return EXIT.failures;
}

/** One clear line; the stack only with --verbose. */
export function formatError(error: unknown, verbose: boolean): string {
  if (!(error instanceof Error)) return `checkout-kit: ${String(error)}`;
  if (verbose) return `checkout-kit: ${error.stack ?? error.message}`;
  return `checkout-kit: ${error.message.split('\n')[0]}`;
}
