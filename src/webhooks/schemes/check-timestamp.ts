import { WebhookVerificationError } from '../../errors/index.js';

/** Parse a unix-seconds header value strictly: digits only. */
export function parseTimestamp(value: string, headerName: string): number {
  if (!/^[0-9]{1,15}$/.test(value)) {
    throw new WebhookVerificationError(
      'bad_timestamp',
      `Invalid ${headerName} "${value.slice(0, 40)}": expected unix seconds, e.g. ${Math.floor(Date.now() / 1000)}.`,
    );
  }
  return Number(value);
}

/** Refuse a timestamp more than `toleranceSeconds` away from now, in either direction. */
export function checkTolerance(timestamp: number, nowSeconds: number, toleranceSeconds: number): void {
  if (nowSeconds - timestamp > toleranceSeconds) {
    throw new WebhookVerificationError(
      'timestamp_too_old',
      `Message timestamp too old: signed ${nowSeconds - timestamp} s ago, tolerance is ${toleranceSeconds} s. ` +
        'A replay needs a fresh signature (checkout-kit replay signs again); otherwise check this server clock.',
    );
  }
  if (timestamp - nowSeconds > toleranceSeconds) {
    throw new WebhookVerificationError(
      'timestamp_too_new',
      `Message timestamp too new: signed ${timestamp - nowSeconds} s in the future, tolerance is ${toleranceSeconds} s. Check the clocks of sender and receiver.`,
    );
  }
}
