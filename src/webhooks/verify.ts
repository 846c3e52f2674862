import { WebhookVerificationError } from '../errors/index.js';
import { headerGetter, type HeaderBag } from './header-value.js';
import { rawBody } from './raw-body.js';
import { DEFAULT_SCHEME, type VerifiedDelivery, type WebhookScheme } from './scheme.js';
import { resolveScheme } from './schemes/resolve-scheme.js';

export interface VerifierOptions {
  /**
   * One or more secrets (`whsec_…` for Standard Webhooks). During a rotation, configure the old and
   * the new one: a delivery signed by either verifies.
   */
  secrets: string | readonly string[];
  /** @default { kind: 'standard-webhooks' } */
  scheme?: WebhookScheme;
  /** Allowed distance between the signed timestamp and now, in seconds, both ways. @default 300 */
  toleranceSeconds?: number;
}

export interface VerifyInput {
  headers: HeaderBag;
  /** The raw body: a Buffer / Uint8Array, or the exact string received. A parsed object is refused. */
  body: unknown;
  /** Current time in ms. @default Date.now() */
  now?: number;
}

/** Throws `WebhookVerificationError`, or returns what the delivery's headers said. */
export type WebhookVerifier = (input: VerifyInput) => VerifiedDelivery;

/**
 * Build a verifier. Secrets are decoded once here, so each delivery costs one HMAC per secret.
 * @example
 * const verify = createVerifier({ secrets: process.env.CHECKOUT_WEBHOOK_SECRET!.split(/[\s,]+/) });
 * verify({ headers: req.headers, body: rawBuffer });
 */
export function createVerifier(options: VerifierOptions): WebhookVerifier {
  const secrets = typeof options.secrets === 'string' ? [options.secrets] : [...options.secrets];
  if (secrets.length === 0) {
    throw new WebhookVerificationError('no_secret', 'No webhook secret configured: set CHECKOUT_WEBHOOK_SECRET (whsec_…) or pass secrets.');
  }
  const scheme = resolveScheme(options.scheme ?? DEFAULT_SCHEME);
  const keys = secrets.map((secret, index) => scheme.key(secret, index));
  const toleranceSeconds = options.toleranceSeconds ?? 300;
  return ({ headers, body, now }) =>
    scheme.verify({
      header: headerGetter(headers),
      body: rawBody(body),
      keys,
      nowSeconds: Math.floor((now ?? Date.now()) / 1000),
      toleranceSeconds,
    });
}

/** Verify one delivery. Prefer `createVerifier` when verifying many: it decodes secrets once. */
export function verifyWebhook(input: VerifyInput & VerifierOptions): VerifiedDelivery {
  return createVerifier(input)(input);
}
