import { CheckoutKitError } from '../errors/index.js';

/** A console request the console refuses: answered with `status` and the spec's error object. */
export class ConsoleRequestError extends CheckoutKitError {
  override name = 'ConsoleRequestError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
