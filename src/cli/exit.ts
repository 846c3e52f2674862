import { CheckoutKitError, ConfigError, InvalidRequestError, printable, terminalText } from '../errors/index.js';

/** Exit codes: 0 done, 1 something failed (a run, a request, a check), 2 a usage or configuration error. */
export const EXIT = { ok: 0, failures: 1, usage: 2 } as const;

/** A usage problem found by a command (bad flag value, missing argument): exit 2. */
export class UsageError extends CheckoutKitError {
  override name = 'UsageError';
}

/**
 * An id the user named that the store does not hold (`events show`, `payments show`, `retry`,
 * `replay --event`): a usage error, exit 2, in every command alike. `see` says where the ids are.
 * @example throw notInStore('event', id, '`checkout-kit events list`');
 */
export function notInStore(what: string, id: string, see: string): UsageError {
  // Escaped here, not only where the error is printed: replay writes this line itself, and a line
  // break in the id would otherwise cut the message at the first line the CLI prints.
  return new UsageError(`No ${what} ${printable(id)} in the store: see ${see}.`);
}

/** Exit code for an error that escaped a command. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof UsageError || error instanceof ConfigError || error instanceof InvalidRequestError) return EXIT.usage;
  return EXIT.failures;
}

/**
 * One clear line; the stack only with --verbose. Ids in a message come from the command line, the
 * store or the service: an escape sequence must not reach the terminal, nor a bidirectional control
 * reorder the line, in either form.
 */
export function formatError(error: unknown, verbose: boolean): string {
  if (!(error instanceof Error)) return `checkout-kit: ${printable(String(error))}`;
  if (verbose) return `checkout-kit: ${terminalText(error.stack ?? error.message)}`;
  return `checkout-kit: ${printable(error.message.split('\n')[0]!)}`;
}
