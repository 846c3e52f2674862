import { randomBytes, randomUUID } from 'node:crypto';
import { newWebhookSecret } from '../webhooks/verify/sign.js';
import type { Environment } from '../schemas/index.js';
import type { MerchantKeys, PartnerAccount, SandboxData } from './records.js';
import { newMerchant } from './resources/merchants.js';
import type { NetworkSpec } from './networks.js';

const ENVIRONMENTS: Environment[] = ['test', 'live'];

function secret(prefix: string): string {
  return `${prefix}${randomBytes(24).toString('hex')}`;
}

/** Keys in the spec's formats (section 5) for `environment`. */
export function merchantKeys(environment: Environment): MerchantKeys {
  return { apiKey: secret(`svc_mk_${environment}_`), signingSecret: secret('svc_ms_'), invoiceKey: secret(`${environment}_`) };
}

/**
 * On first start: the webhook secret, one partner with a key pair in each environment (the same
 * `partnerId` in both), and in each environment one merchant of that partner with keys. Later
 * starts keep what is stored, so credentials survive restarts.
 */
export function seedAccounts(data: SandboxData, networks: Record<Environment, NetworkSpec[]>, now: string): boolean {
  let changed = false;
  if (!data.webhookSecret) {
    data.webhookSecret = newWebhookSecret();
    changed = true;
  }
  for (const environment of ENVIRONMENTS) {
    let partner = data.partners.find((p) => p.environment === environment);
    if (!partner) {
      const sibling = data.partners[0];
      partner = {
        partnerId: sibling?.partnerId ?? randomUUID(),
        organizationId: sibling?.organizationId ?? randomUUID(),
        environment,
        apiKey: secret(`svc_pk_${environment}_`),
        signingSecret: secret('svc_ps_'),
      } satisfies PartnerAccount;
      data.partners.push(partner);
      changed = true;
    }
    if (!data.merchants.some((m) => m.environment === environment && m.keys)) {
      const merchant = newMerchant({
        partner,
        input: { externalTenantId: `sandbox-${environment}`, name: `Sandbox merchant (${environment})`, email: 'merchant@sandbox.test' },
        networks: networks[environment],
        now,
      });
      data.merchants.push({ ...merchant, keys: merchantKeys(environment) });
      changed = true;
    }
  }
  return changed;
}
