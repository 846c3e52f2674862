import type { CredentialsFlags, MerchantsListFlags, OnboardFlags } from '../actions/merchants.js';
import { storedId } from '../flags.js';
import type { Register } from '../register.js';

/** `checkout-kit merchants onboard | list | show`: a partner platform's tenants and their merchants. */
export const registerMerchants: Register = (program, io) => {
  const merchants = program.command('merchants').description('partner platforms: onboard tenants as merchants of the service, and list them');
  merchants
    .command('onboard')
    .description(
      'create the service merchant of a tenant, once per tenant and environment however often it is run (needs CHECKOUT_PARTNER_API_KEY and CHECKOUT_PARTNER_SIGNING_SECRET)',
    )
    .requiredOption('--tenant <id>', "the platform's own id of the tenant (the merchant's externalTenantId)")
    .requiredOption('--name <name>', "the merchant's name")
    .requiredOption('--email <email>', "the merchant's e-mail address")
    .option('--json', 'print the stored record as JSON')
    .action(async (options: OnboardFlags) => (await import('../actions/merchants.js')).onboard(options, io));
  merchants
    .command('list')
    .description('the onboarded tenants, oldest first: tenant, environment, merchant id, status')
    .option('--limit <n>', 'at most this many', '100')
    .option('--json', 'JSON output')
    .action(async (options: MerchantsListFlags) => (await import('../actions/merchants.js')).listMerchants(options, io));
  merchants
    .command('show')
    .description("one tenant's merchant, in each environment it was onboarded in")
    .argument('<id>', 'the tenant id, or the service merchant id (see `checkout-kit merchants list`)', storedId)
    .option('--json', 'JSON output')
    .action(async (id: string, options: { json?: boolean }) => (await import('../actions/merchants.js')).showMerchant(id, options, io));
  merchants
    .command('credentials')
    .description(
      'store a tenant\'s own credentials, sealed with CHECKOUT_SECRETS_KEY, read from standard input as JSON {"apiKey", "signingSecret", "webhookSecret"} (the key pair, the webhook secret, or all three): its payments are then read with its key, its deliveries verified with its webhook secret',
    )
    .requiredOption('--tenant <id>', 'the onboarded tenant', storedId)
    .option('--from-file <path>', 'read the JSON from this file instead of standard input')
    .option('--clear', "forget them: the tenant's payments are read with the partner's keys again")
    .option('--environment <env>', "test or live: with --clear (default test), or for a webhook secret stored alone (else the merchant key's)")
    .action(async (options: CredentialsFlags) => (await import('../actions/merchants.js')).credentials(options, io));
  merchants
    .command('rekey')
    .description("after adding a new key first in CHECKOUT_SECRETS_KEY: re-seal every tenant's stored credentials with it (then the old key can go)")
    .action(async () => (await import('../actions/merchants.js')).rekey(io));
};
