import type { SandboxHandle } from '../sandbox/index.js';

/**
 * The configuration a backend started by `check --start` runs with: the sandbox's test keys and
 * webhook secret, a store and a handler-call record of this check only, and the address of
 * `--against`. It replaces those variables whatever `.env` says (real variables win over it).
 */
export function backendEnv(sandbox: SandboxHandle, options: { store: string; record: string; against: string }): Record<string, string> {
  const { test, webhookSecret } = sandbox.credentials;
  const against = new URL(options.against);
  return {
    CHECKOUT_BASE_URL: sandbox.url,
    CHECKOUT_API_KEY: test.merchant.apiKey,
    CHECKOUT_SIGNING_SECRET: test.merchant.signingSecret,
    CHECKOUT_INVOICE_KEY: test.merchant.invoiceKey,
    CHECKOUT_PARTNER_API_KEY: test.partner.apiKey,
    CHECKOUT_PARTNER_SIGNING_SECRET: test.partner.signingSecret,
    CHECKOUT_WEBHOOK_SECRET: webhookSecret,
    CHECKOUT_WEBHOOK_SCHEME: 'standard-webhooks',
    CHECKOUT_REDIRECT_HOSTS: new URL(sandbox.url).host,
    CHECKOUT_STORE: options.store,
    CHECKOUT_CHECK_RECORD: options.record,
    HOST: against.hostname.replace(/^\[|\]$/g, ''),
    PORT: against.port || (against.protocol === 'https:' ? '443' : '80'),
  };
}
