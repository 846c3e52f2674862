import { CheckoutKitError } from '../errors/index.js';

/** The target folder or its package.json cannot be scaffolded into; nothing further was written. */
export class ScaffoldError extends CheckoutKitError {
  override name = 'ScaffoldError';
}
