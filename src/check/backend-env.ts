import type { ConnectionRole } from '../config/index.js';
import { sandboxEnv } from '../devtools/sandbox-env.js';
import type { SandboxHandle } from '../sandbox/index.js';

/**
 * The configuration a backend started by `check --start` runs with: the sandbox's test keys and
 * webhook secret, a store and a handler-call record of this check only, and the address of
 * `--against`. It replaces those variables whatever `.env` says (real variables win over it).
 */
export function backendEnv(
  sandbox: SandboxHandle,
  options: { store: string; record: string; against: string; role?: ConnectionRole | undefined },
): Record<string, string> {
  const { test } = sandbox.credentials;
  const against = new URL(options.against);
  return {
    CHECKOUT_PARTNER_API_KEY: test.partner.apiKey,
    CHECKOUT_PARTNER_SIGNING_SECRET: test.partner.signingSecret,
    // A partner platform's: the partner's keys and no merchant key (`--partner`).
    ...sandboxEnv({ ...sandbox.credentials, baseUrl: sandbox.url }, options.role),
    CHECKOUT_WEBHOOK_SCHEME: 'standard-webhooks',
    CHECKOUT_REDIRECT_HOSTS: new URL(sandbox.url).host,
    CHECKOUT_STORE: options.store,
    CHECKOUT_CHECK_RECORD: options.record,
    HOST: against.hostname.replace(/^\[|\]$/g, ''),
    PORT: against.port || (against.protocol === 'https:' ? '443' : '80'),
  };
}
