import { checkKey } from '../config/index.js';
import { registerSecret } from '../errors/index.js';
import { UsageError } from './exit.js';

/** Flag parsers shared by several commands. */

/** An http(s) URL, or a usage error naming the flag. */
export function httpUrl(flag: string, value: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new UsageError(`${flag} takes an http(s) URL such as http://127.0.0.1:3000/webhooks/checkout, got "${value}".`);
  }
  return value;
}

/** `--secret`, else the first `CHECKOUT_WEBHOOK_SECRET`; a usage error when neither is set. */
export function signingSecret(flag: string | undefined, configured: readonly string[], standardWebhooks = true): string {
  if (flag !== undefined) {
    registerSecret(flag);
    // Only Standard Webhooks fixes the secret's format (whsec_…); other schemes sign with its bytes.
    if (standardWebhooks) checkKey('webhook-secret', flag, '--secret');
    return flag;
  }
  const [first] = configured;
  if (!first) throw new UsageError('no secret to sign with: pass --secret whsec_… or set CHECKOUT_WEBHOOK_SECRET.');
  return first;
}
